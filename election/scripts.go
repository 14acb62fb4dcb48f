package election

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// Safe mode's acquire. KEYS[1] the lease, KEYS[2] the token counter, KEYS[3]
// the owner (all in one hash slot: TokenKey, OwnerKey); ARGV[1] id, ARGV[2]
// ttl ms, ARGV[3] the highest token the caller has seen (0 if none), ARGV[4]
// the caller's process nonce. It wins when the key is absent or already
// holds id with the caller's nonce in the owner key (a reply lost after an
// earlier acquire or renew must not leave a phantom lease), sets the lease
// and the owner (the nonce) for ttl, and returns the new fencing token; when
// another instance holds the lease it returns minus the counter (0 when
// there is none), so that followers learn the latest token. When the lease
// holds id under another nonce — another process uses the same ID — it
// refuses with a DUPID error.
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
if cur and ARGV[4] ~= '' then
  local owner = redis.call('GET', KEYS[3])
  if owner and owner ~= ARGV[4] then
    return redis.error_reply('` + dupIDPrefix + ` the lease holds this ID for another process')
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[4] ~= '' then redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[2]) end
local t = redis.call('TIME')
local tok = tonumber(t[1]) * 1000000 + tonumber(t[2])
if prev + 1 > tok then tok = prev + 1 end
local seen = tonumber(ARGV[3]) or 0
if seen + 1 > tok then tok = seen + 1 end
redis.call('SET', KEYS[2], string.format('%.0f', tok))
return tok`

var safeAcquireScript = redis.NewScript(safeAcquireLua)

// Safe mode's renew: the spec's, and it refuses (DUPID) when the owner key
// (KEYS[2]) holds another process's nonce than ARGV[3]: a process that
// shares our ID acquired since. It extends the lease, then sets the owner
// key to our nonce with the same TTL, so that it never expires before the
// lease: each command of a script reads the clock anew (Redis 7.0), and an
// owner key extended first could expire a millisecond before the lease,
// which would let a twin's acquire through. It also puts back an owner key
// that is missing (expired that way, or evicted by a volatile-* maxmemory
// policy) while the lease holds our ID. ARGV[1] id, ARGV[2] ttl ms, ARGV[3]
// nonce ("" skips the owner key).
var safeRenewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local owner = redis.call('GET', KEYS[2])
if ARGV[3] ~= '' and owner and owner ~= ARGV[3] then
  return redis.error_reply('` + dupIDPrefix + ` the lease holds this ID for another process')
end
local ok = redis.call('PEXPIRE', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
elseif owner then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return ok`)

// Safe mode's release: the spec's, and it leaves the lease alone (0) when
// the owner key (KEYS[2]) holds another process's nonce than ARGV[2]: the
// lease holds our ID for a process that shares it, which a release by ID
// alone would delete. A Stop releases whenever the lease may be ours, also
// after an acquire whose outcome it never learned (cancelled in flight), and
// that acquire may have been refused as a duplicate. It deletes the owner
// key with the lease. ARGV[1] id.
var safeReleaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local owner = redis.call('GET', KEYS[2])
if ARGV[2] ~= '' and owner and owner ~= ARGV[2] then
  return 0
end
redis.call('DEL', KEYS[2])
return redis.call('DEL', KEYS[1])`)

// dupIDPrefix starts the error the safe scripts return when the lease holds
// this elector's ID for another process.
const dupIDPrefix = "DUPID"

// ErrDuplicateID is wrapped by the error a safe-mode elector reports when the
// lease holds its ID but another process acquired it: two processes share
// Opts.ID (or a process restarted with a fixed ID while its predecessor's
// lease is still alive: it expires within TTL). The elector does not take or
// renew such a lease: an acquire fails (it stays a follower), a renew demotes.
var ErrDuplicateID = errors.New("another process uses this elector's ID: IDs must be unique per process")

// SafeLease is one safe-mode elector's lease, as RunSafeOp runs it.
type SafeLease struct {
	// Key is the lease's Redis key (LeaderKey(name)); the token counter and
	// the owner key derive from it (TokenKey, OwnerKey).
	Key string
	// ID is the value the instance writes into the lease.
	ID string
	// Nonce tells this process apart from another with the same ID (the
	// Elector draws one per elector); "" skips that check.
	Nonce string
	// TTL is the lease's time to live (PX, whole milliseconds).
	TTL time.Duration
	// Seen is the highest fencing token the caller has seen, 0 if none: a
	// won acquire's token is above it.
	Seen int64
}

// RunSafeOp runs op as a safe-mode elector does: acquire is the safe acquire
// (see safeAcquireLua: it also takes a lease that holds our ID and nonce,
// and returns a fencing token from the token counter, above l.Seen); renew
// is the spec's renew refusing a lease that holds our ID for another process
// (ErrDuplicateID); release is the spec's leaving such a lease alone (not
// ok). ok reports a win (acquire) or the
// script's 1. token is the new fencing token of a won acquire, the token
// counter as a lost acquire read it (what the caller has now seen), else 0.
func RunSafeOp(ctx context.Context, rdb redis.Scripter, op Op, l SafeLease) (ok bool, token int64, err error) {
	tk := tokenKeyOf(l.Key)
	ttl := strconv.FormatInt(l.TTL.Milliseconds(), 10)
	switch op {
	case OpAcquire:
		n, err := safeAcquireScript.Run(ctx, rdb, []string{l.Key, tk, ownerKeyOf(l.Key)}, l.ID, ttl,
			strconv.FormatInt(l.Seen, 10), l.Nonce).Int64()
		if err != nil {
			return false, 0, dupID(err)
		}
		if n > 0 {
			return true, n, nil
		}
		return false, -n, nil
	case OpRenew:
		n, err := safeRenewScript.Run(ctx, rdb, []string{l.Key, ownerKeyOf(l.Key)}, l.ID, ttl, l.Nonce).Int64()
		if err != nil {
			return false, 0, dupID(err)
		}
		return n == 1, 0, nil
	case OpRelease:
		n, err := safeReleaseScript.Run(ctx, rdb, []string{l.Key, ownerKeyOf(l.Key)}, l.ID, l.Nonce).Int64()
		return n == 1, 0, err
	}
	return false, 0, fmt.Errorf("no script for operation %v", op)
}

// dupID wraps a DUPID refusal in ErrDuplicateID.
func dupID(err error) error {
	if strings.HasPrefix(err.Error(), dupIDPrefix) {
		return fmt.Errorf("%w (%v)", ErrDuplicateID, err)
	}
	return err
}

// ScriptOp tells which operation the lease script with SHA1 sha runs, for
// instrumentation that sees EVALSHA calls (a go-redis hook); OpNone for any
// other script.
func ScriptOp(sha string) Op {
	switch sha {
	case acquireScript.Hash(), safeAcquireScript.Hash():
		return OpAcquire
	case renewScript.Hash(), safeRenewScript.Hash():
		return OpRenew
	case releaseScript.Hash(), safeReleaseScript.Hash():
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
