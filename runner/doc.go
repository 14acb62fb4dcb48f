// Package runner is TaskRunner: a task queue on Redis Streams in which every
// instance works and one elected instance also does the group's chores.
//
// The model. Instances that share a consumer group (Options.Group) form one
// runner fleet. Dispatch appends a task to the group's stream; every instance
// reads the stream with XREADGROUP under its own consumer name and runs the
// tasks on a bounded pool of long-lived worker goroutines, reading up to
// Options.ReadAhead entries ahead of its free workers (fewer when its tasks
// are slow). A task is acknowledged (XACK) only after its
// handler returned nil (successes in batches of up to Options.AckBatch, so
// a crash repeats up to 2×AckBatch + one per worker alive, at most
// MaxWorkers, completed tasks after ClaimIdle), so delivery is at least once: a failed task is retried
// with backoff up to its MaxRetries and then dead-lettered, and the pending
// entries of an instance that crashed or stalled are taken over (XAUTOCLAIM)
// by the live ones once they have been idle for ClaimIdle.
//
// The leader. Each instance runs the spec's elector (package election) on the
// group's lease. The instance whose elector says it leads (IsLeader, read
// from the elector itself before every chore) also does the three
// "global" chores on every chore tick: it moves due delayed tasks (and due
// retries) into the stream, computes and resets the timing metrics, and
// decides and publishes the per-instance worker-pool capacity. Followers only
// heartbeat and apply the published capacity. The chores are written so that
// two instances that both believe they lead (the spec allows a brief overlap)
// do no harm: each chore is one atomic Lua script, so a delayed task reaches
// the stream once, a metric sample is counted once, and capacity versions only
// grow.
//
// Safe mode (Options.Election.Safe, off by default). The elector guards its
// lease (it demotes itself before the lease can have expired in Redis, even
// while a renewal hangs) and each promotion carries a fencing token. Every
// leader-only chore script then first checks, inside Redis, that the lease
// still holds this instance's ID and the token counter this term's token,
// and refuses to write otherwise (EventChoreFenced): a chore decided by a
// leader that lost its lease meanwhile (a paused process, a slow or
// partitioned network) lands as a no-op. All of a group's keys, the lease
// and the token share one Redis Cluster slot (keys.go), so the check and the
// write are one script on a Cluster too.
//
// Observability. Options.OnEvent receives every event (leadership, chores,
// task life cycle, errors) synchronously, and Stats returns counters. Nothing
// the runner reports can block it unless the hook itself blocks.
//
// The Redis keys a group uses are listed in keys.go.
package runner
