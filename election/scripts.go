package election

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The three lease scripts of the spec. Each runs atomically on the server, so
// no instance can renew or release a lease it no longer owns. redis.Script
// runs EVALSHA and falls back to EVAL (which reloads the script) on NOSCRIPT,
// so a SCRIPT FLUSH or a restarted Redis costs one extra round trip, not an
// error.
var (
	// acquireScript: SET key id PX ttl NX; 1 when this call created the key.
	acquireScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  return 1
end
return 0`)

	// renewScript: GET key; if == id then PEXPIRE key ttl.
	renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

	// releaseScript: GET key; if == id then DEL key.
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)
)

// RunOp runs the lease script for op on key with this instance's id (and ttl
// for acquire and renew) and reports whether it returned 1. The Elector uses
// it for every operation; a simulator may drive a Machine with it directly.
func RunOp(ctx context.Context, rdb redis.Scripter, op Op, key, id string, ttl time.Duration) (bool, error) {
	var s *redis.Script
	args := []any{id}
	switch op {
	case OpAcquire:
		s = acquireScript
		args = append(args, strconv.FormatInt(ttl.Milliseconds(), 10))
	case OpRenew:
		s = renewScript
		args = append(args, strconv.FormatInt(ttl.Milliseconds(), 10))
	case OpRelease:
		s = releaseScript
	default:
		return false, fmt.Errorf("no script for operation %v", op)
	}
	n, err := s.Run(ctx, rdb, []string{key}, args...).Int64()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}
