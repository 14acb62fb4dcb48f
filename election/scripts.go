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

// Safe mode's acquire. KEYS[1] the lease, KEYS[2] the token counter (same
// hash slot: TokenKey); ARGV[1] id, ARGV[2] ttl ms, ARGV[3] the highest
// token the caller has seen (0 if none). It wins when the key is absent or
// already holds id (a reply lost after an earlier acquire or renew must not
// leave a phantom lease), sets the lease for ttl, and returns the new fencing
// token; when another instance holds the lease it returns minus the counter
// (0 when there is none), so that followers learn the latest token.
//
// The token is max(counter + 1, Redis server time in µs, seen + 1). While the
// counter survives it is counter + 1: it grows with every promotion. When the
// counter is lost (a restart without persistence, FLUSHALL, a restore from
// an older snapshot, a failover to a replica that missed the last write) it is
// still above every token issued before the Redis clock's current reading,
// and above every token the winner has seen (its own terms, and the counter
// its failed attempts read). Tokens are below 2^53 (Lua numbers) until the
// year 2255.
const safeAcquireLua = `
local cur = redis.call('GET', KEYS[1])
local prev = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if cur and cur ~= ARGV[1] then
  return -prev
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local t = redis.call('TIME')
local tok = tonumber(t[1]) * 1000000 + tonumber(t[2])
if prev + 1 > tok then tok = prev + 1 end
local seen = tonumber(ARGV[3]) or 0
if seen + 1 > tok then tok = seen + 1 end
redis.call('SET', KEYS[2], string.format('%.0f', tok))
return tok`

var safeAcquireScript = redis.NewScript(safeAcquireLua)

// RunSafeOp runs op as a safe-mode elector does: acquire is the safe acquire
// (see safeAcquireLua: it also takes a lease that holds id, and returns a
// fencing token from tokenKey, at least seen + 1, where seen is the highest
// token the caller has seen, 0 if none); renew and release are the spec's
// scripts. ok reports a win (acquire) or the script's 1. token is the new
// fencing token of a won acquire, the token counter as the lost acquire read
// it (what the caller has now seen), else 0.
func RunSafeOp(ctx context.Context, rdb redis.Scripter, op Op, key, tokenKey, id string, ttl time.Duration, seen int64) (ok bool, token int64, err error) {
	if op != OpAcquire {
		ok, err = RunOp(ctx, rdb, op, key, id, ttl)
		return ok, 0, err
	}
	n, err := safeAcquireScript.Run(ctx, rdb, []string{key, tokenKey}, id, strconv.FormatInt(ttl.Milliseconds(), 10),
		strconv.FormatInt(seen, 10)).Int64()
	if err != nil {
		return false, 0, err
	}
	if n > 0 {
		return true, n, nil
	}
	return false, -n, nil
}

// ScriptOp tells which operation the lease script with SHA1 sha runs, for
// instrumentation that sees EVALSHA calls (a go-redis hook); OpNone for any
// other script.
func ScriptOp(sha string) Op {
	switch sha {
	case acquireScript.Hash(), safeAcquireScript.Hash():
		return OpAcquire
	case renewScript.Hash():
		return OpRenew
	case releaseScript.Hash():
		return OpRelease
	}
	return OpNone
}

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
