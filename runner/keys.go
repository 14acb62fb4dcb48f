package runner

import "github.com/leaselab/leaselab/election"

// keys are the Redis keys of one consumer group G. This is the one place they
// are defined. Every key but the lease carries the hash tag {G}, so that the
// Lua scripts that touch several of them run in one Redis Cluster slot.
//
//	taskrunner:{G}:stream      STREAM  ready tasks; consumer group G, one consumer per instance
//	taskrunner:{G}:delayed     ZSET    delayed tasks and retries; score = due time (Unix ms, Redis clock),
//	                                   member = msgpack(id, task, payload, attempt)
//	taskrunner:{G}:dead        STREAM  dead-lettered tasks with their last error
//	taskrunner:{G}:metrics:n   HASH    task -> executions since the last metrics reset
//	taskrunner:{G}:metrics:us  HASH    task -> total execution time (µs) since the last reset
//	taskrunner:{G}:instances   ZSET    instance id -> heartbeat expiry (Unix ms, Redis clock)
//	taskrunner:{G}:capacity    HASH    capacity, version, leader: the published pool size
//	taskrunner:leader:<base32(sha1(G))>  STRING the lease (election.LeaderKey), owned by the elector
type keys struct {
	stream    string
	delayed   string
	dead      string
	metricsN  string
	metricsUS string
	instances string
	capacity  string
	lease     string
}

func keysFor(group string) keys {
	p := "taskrunner:{" + group + "}:"
	return keys{
		stream:    p + "stream",
		delayed:   p + "delayed",
		dead:      p + "dead",
		metricsN:  p + "metrics:n",
		metricsUS: p + "metrics:us",
		instances: p + "instances",
		capacity:  p + "capacity",
		lease:     election.LeaderKey(group),
	}
}
