package runner

import "github.com/leaselab/leaselab/election"

// keys are the Redis keys of one consumer group G. This is the one place they
// are defined. With L = election.LeaderKey(G) = taskrunner:leader:<base32(sha1(G))>
// (the spec's lease key), every other key carries the hash tag {L}
// (election.HashTag): the tag's content is the lease key itself, so all of
// them live in the lease's Redis Cluster slot, whatever G contains (a brace
// in G can no longer split them: base32 has none), and one Lua script can
// check the lease and the fencing token and write the chore keys (safe mode).
//
//	taskrunner:{L}:stream      STREAM  ready tasks; consumer group G, one consumer per instance
//	taskrunner:{L}:delayed     ZSET    delayed tasks and retries; score = due time (Unix ms, Redis clock),
//	                                   member = msgpack(id, task, payload, attempt)
//	taskrunner:{L}:dead        STREAM  dead-lettered tasks with their last error
//	taskrunner:{L}:metrics:n   HASH    task -> executions since the last metrics reset
//	taskrunner:{L}:metrics:us  HASH    task -> total execution time (µs) since the last reset
//	taskrunner:{L}:instances   ZSET    instance id -> heartbeat expiry (Unix ms, Redis clock)
//	taskrunner:{L}:capacity    HASH    capacity, version, leader: the published pool size
//	taskrunner:{L}:token       STRING  the fencing token counter (election.TokenKey; safe mode), owned by the elector
//	taskrunner:{L}:owner       STRING  the process nonce of the last safe acquire (election.OwnerKey), owned by the elector, expires with the lease
//	L                          STRING  the lease (election.LeaderKey), owned by the elector
type keys struct {
	stream    string
	delayed   string
	dead      string
	metricsN  string
	metricsUS string
	instances string
	capacity  string
	lease     string
	token     string
}

func keysFor(group string) keys {
	p := "taskrunner:" + election.HashTag(group) + ":"
	return keys{
		stream:    p + "stream",
		delayed:   p + "delayed",
		dead:      p + "dead",
		metricsN:  p + "metrics:n",
		metricsUS: p + "metrics:us",
		instances: p + "instances",
		capacity:  p + "capacity",
		lease:     election.LeaderKey(group),
		token:     election.TokenKey(group),
	}
}
