package runner

import "github.com/redis/go-redis/v9"

// The Lua scripts. Each runs atomically on the server; that is what makes the
// leader's chores safe when two instances believe they lead, and what keeps a
// task from being lost or doubled between two keys. Times that decide what is
// due come from the Redis server's clock (TIME), never an instance's, so a
// drifting instance clock cannot make a task early or late. Delayed members
// are packed with cmsgpack inside Redis, so the Go side never encodes them.

// luaNow sets now to the server time in Unix milliseconds.
const luaNow = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// luaAck acknowledges entry ARGV[2] of stream KEYS[1] for group ARGV[1] and
// deletes it, so the stream holds only unfinished tasks. acked is 0 when
// another instance finished the entry first: then it must not be retried,
// dead-lettered or handed back a second time.
const luaAck = `
local acked = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
if acked == 1 then redis.call('XDEL', KEYS[1], ARGV[2]) end
`

// luaIDBefore defines idBefore(a, b): stream entry id a is older than b.
// Ids are "ms-seq", both decimal without leading zeros, so a shorter number
// is a smaller one and equal lengths compare as strings.
const luaIDBefore = `
local function idBefore(a, b)
  local ia, ib = string.find(a, '-', 1, true), string.find(b, '-', 1, true)
  if ia ~= ib then return ia < ib end
  local ma, mb = string.sub(a, 1, ia), string.sub(b, 1, ib)
  if ma ~= mb then return ma < mb end
  local sa, sb = string.sub(a, ia + 1), string.sub(b, ib + 1)
  if #sa ~= #sb then return #sa < #sb end
  return sa < sb
end
`

// luaSample records one execution of task ARGV[3] that took ARGV[4] µs, in
// the two metrics hashes KEYS[2] and KEYS[3], when luaAck acknowledged it
// (a re-sent script records nothing twice).
const luaSample = `
if acked == 1 then
  redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
  redis.call('HINCRBY', KEYS[3], ARGV[3], ARGV[4])
end
`

var (
	// enqueueDelayedScript adds a task to the delayed ZSET KEYS[1], due at
	// ARGV[1] (Unix ms), or ARGV[2] ms from now by the server's clock when
	// ARGV[1] is empty. ARGV[3..6]: id, task, payload, attempt. Returns the
	// due time.
	enqueueDelayedScript = redis.NewScript(luaNow + `
local due = tonumber(ARGV[1])
if ARGV[1] == '' then due = now + tonumber(ARGV[2]) end
redis.call('ZADD', KEYS[1], due, cmsgpack.pack(ARGV[3], ARGV[4], ARGV[5], ARGV[6]))
return due`)

	// scheduleScript is the delayed scheduler's tick: it moves up to ARGV[1]
	// due members of the ZSET KEYS[1] into the stream KEYS[2]. XADD and ZREM
	// of a member happen in one script, so two leaders ticking at once cannot
	// both move it. Returns id, task, attempt, lateness (ms) per moved task.
	scheduleScript = redis.NewScript(scheduleLua)

	// completeScript finishes a batch of successful tasks. KEYS: stream,
	// metrics:n, metrics:us. ARGV: group, n, then per entry: entry id, task
	// name, execution µs. Every entry is acknowledged, those this call
	// acknowledged are deleted and their samples recorded, in one step.
	// Returns acked (1 or 0) per entry, in order.
	//
	// Re-running a batch is harmless: an entry acknowledged before answers 0
	// and records no sample again. So the script can be re-sent when a reply
	// was lost (by go-redis's retries, and by the acker, see flushAcks).
	// The price: a task that another instance finished first (it ran twice)
	// records only the first finisher's sample.
	//
	// Deleting: every entry older than the group's oldest pending entry has
	// been delivered (a group delivers in ID order) and is no longer pending,
	// so it was acknowledged, and every script that acknowledges deletes: the
	// stream holds none of them but those acknowledged here. One XTRIM MINID
	// removes those (whole listpack nodes at a time); XDEL, which searches
	// each id from the start of its node, is left for the others. A batch of
	// fewer than 8 skips the XPENDING and XTRIM, which cost more than XDEL
	// there (a live stream with one task at a time acknowledges batches of 1).
	// This holds while the group is the stream's only reader and every new
	// entry comes from XADD * (dispatch, hand-back, scheduler, retries).
	completeScript = redis.NewScript(luaIDBefore + `
local n = tonumber(ARGV[2])
local out, acked, names, count, us = {}, {}, {}, {}, {}
for i = 1, n do
  local id, task = ARGV[3 * i], ARGV[3 * i + 1]
  local a = redis.call('XACK', KEYS[1], ARGV[1], id)
  out[i] = a
  if a == 1 then
    acked[#acked + 1] = id
    if not count[task] then
      names[#names + 1] = task
      count[task], us[task] = 0, 0
    end
    count[task] = count[task] + 1
    us[task] = us[task] + tonumber(ARGV[3 * i + 2])
  end
end
local del = acked
if #acked >= 8 then
  -- The extended form with COUNT 1: the summary form walks every
  -- consumer of the group, and a crashed instance's consumer is never
  -- deleted (1.2 ms per call with 50,000 of them, 1 us this way).
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1)
  if #p > 0 then
    local oldest, trim = p[1][1], false
    del = {}
    for _, id in ipairs(acked) do
      if idBefore(id, oldest) then trim = true else del[#del + 1] = id end
    end
    if trim then redis.call('XTRIM', KEYS[1], 'MINID', oldest) end
  end
end
if #del > 0 then redis.call('XDEL', KEYS[1], unpack(del)) end
for _, task in ipairs(names) do
  redis.call('HINCRBY', KEYS[2], task, count[task])
  redis.call('HINCRBY', KEYS[3], task, string.format('%.0f', us[task]))
end
return out`)

	// retryScript finishes a failed task that has retries left: the entry is
	// acknowledged and the task goes to the delayed ZSET KEYS[4], due ARGV[8]
	// ms from now, in one step, so it is neither lost nor doubled. ARGV[5..7]:
	// id, payload, next attempt. Returns acked.
	retryScript = redis.NewScript(luaAck + luaSample + luaNow + `
if acked == 1 then
  redis.call('ZADD', KEYS[4], now + tonumber(ARGV[8]), cmsgpack.pack(ARGV[5], ARGV[3], ARGV[6], ARGV[7]))
end
return acked`)

	// deadScript finishes a task out of retries: acknowledged and appended to
	// the dead-letter stream KEYS[4] in one step. ARGV[5..9]: id, payload,
	// attempt, error, instance. Returns acked.
	deadScript = redis.NewScript(luaAck + luaSample + `
if acked == 1 then
  redis.call('XADD', KEYS[4], '*', 'id', ARGV[5], 'task', ARGV[3], 'payload', ARGV[6],
    'attempt', ARGV[7], 'error', ARGV[8], 'instance', ARGV[9])
end
return acked`)

	// handBackScript returns an unfinished task to the stream at a graceful
	// Stop: the entry is acknowledged and a copy (same id and attempt)
	// appended for any instance to take. KEYS: stream. ARGV: group, entry id,
	// id, task, payload, attempt. Returns acked.
	handBackScript = redis.NewScript(luaAck + `
if acked == 1 then
  redis.call('XADD', KEYS[1], '*', 'id', ARGV[3], 'task', ARGV[4], 'payload', ARGV[5], 'attempt', ARGV[6])
end
return acked`)

	// metricsScript reads and resets the metrics hashes KEYS[1] (counts) and
	// KEYS[2] (µs) in one step, so a sample recorded concurrently lands either
	// in this read or in the next, never in neither. It also returns the
	// stream's length KEYS[3], the group ARGV[1]'s pending count, and the
	// number of live instances in KEYS[4].
	metricsScript = redis.NewScript(metricsLua)

	// beatScript is every instance's heartbeat: instance ARGV[1] is live for
	// ARGV[2] ms more in the ZSET KEYS[1]. The ZSET itself expires when the
	// whole fleet is gone. Returns the published capacity, version and leader
	// from KEYS[2].
	beatScript = redis.NewScript(luaNow + `
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('HMGET', KEYS[2], 'capacity', 'version', 'leader')`)

	// leaveScript is a graceful Stop's last call: instance ARGV[1] leaves the
	// live set KEYS[1], and its consumer leaves group ARGV[2] of the stream
	// KEYS[2] if it holds no pending entry (checked and deleted in one step,
	// so no read can deliver an entry in between). Returns 1 when the
	// consumer was deleted.
	leaveScript = redis.NewScript(`
redis.call('ZREM', KEYS[1], ARGV[1])
local ok, p = pcall(redis.call, 'XPENDING', KEYS[2], ARGV[2], '-', '+', 1, ARGV[1])
if not ok or #p > 0 then return 0 end
redis.call('XGROUP', 'DELCONSUMER', KEYS[2], ARGV[2], ARGV[1])
return 1`)

	// fencedScripts are the leader-only chore scripts as safe mode runs them:
	// each behind luaFence.
	fencedScripts = map[*redis.Script]*redis.Script{}

	// publishScript publishes capacity ARGV[1] from leader ARGV[2] in the hash
	// KEYS[1] under the next version. HINCRBY makes the versions grow even
	// when two leaders publish at once. Returns the version.
	publishScript = redis.NewScript(publishLua)
)

// scheduleLua is the source of scheduleScript.
const scheduleLua = luaNow + `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
local out = {}
for i = 1, #due, 2 do
  local id, task, payload, attempt = cmsgpack.unpack(due[i])
  redis.call('XADD', KEYS[2], '*', 'id', id, 'task', task, 'payload', payload, 'attempt', attempt)
  redis.call('ZREM', KEYS[1], due[i])
  table.insert(out, id)
  table.insert(out, task)
  table.insert(out, attempt)
  table.insert(out, now - tonumber(due[i + 1]))
end
return out`

// metricsLua is the source of metricsScript.
const metricsLua = luaNow + `
local n = redis.call('HGETALL', KEYS[1])
local us = redis.call('HGETALL', KEYS[2])
redis.call('DEL', KEYS[1], KEYS[2])
local len = redis.call('XLEN', KEYS[3])
local pending = 0
local ok, p = pcall(redis.call, 'XPENDING', KEYS[3], ARGV[1])
if ok then pending = p[1] end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
return {n, us, len, pending, redis.call('ZCARD', KEYS[4])}`

// publishLua is the source of publishScript.
const publishLua = `
local v = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'capacity', ARGV[1], 'leader', ARGV[2])
return v`

// fencedPrefix starts the error a fenced chore script returns when it refuses.
const fencedPrefix = "FENCED"

// luaFence is the safe mode's guard in front of a leader-only chore script:
// the caller appends the lease and token keys to KEYS and its instance ID and
// fencing token to ARGV. Unless the lease still holds that ID and the token
// counter still holds that token, the script refuses before writing anything.
// Both keys are in the lease's hash slot, and so are the chore keys
// (keys.go), so this works on a Redis Cluster too.
const luaFence = `
if redis.call('GET', KEYS[#KEYS - 1]) ~= ARGV[#ARGV - 1] or redis.call('GET', KEYS[#KEYS]) ~= ARGV[#ARGV] then
  return redis.error_reply('` + fencedPrefix + ` not the lease holder, or not its current token: a stale leader\'s chore, refused')
end
`

func init() {
	for s, src := range map[*redis.Script]string{scheduleScript: scheduleLua, metricsScript: metricsLua, publishScript: publishLua} {
		fencedScripts[s] = redis.NewScript(luaFence + src)
	}
}
