// Package publish makes an elector's leadership transitions visible from
// outside the process, so that `chaos observe` can measure a live fleet the
// way the harness measures its own instances: overlaps, gaps, stale
// leadership.
//
// A Publisher is attached to an election.Opts (or a runner's
// Config.Election) and receives every promotion, demotion (with its reason)
// and error through Opts.OnTransition. It appends each to a bounded
// in-memory buffer and returns at once: the election loop never waits on
// Redis for it. One goroutine writes the buffer to a capped Redis stream,
// StreamKey(group), one XADD per transition, in a script that also reads
// Redis TIME, so every entry carries three clocks:
//
//   - the instance's wall clock at the transition (Wall) and at the write
//     (PubWall), which may lie (drift, jumps);
//   - the instance's monotonic offset at both moments (Mono, PubMono), so
//     the delay between the transition and its write is known without the
//     wall clock;
//   - Redis's TIME inside the write (Redis), one clock for the whole fleet.
//
// Each write therefore ties the instance's monotonic clock to Redis's (late
// by at most the write's round trip, which the next entry's RTT carries),
// and an observer places every transition of the instance by the writes
// that agree, whatever its wall clock says; the wall clock's offset from
// Redis is estimated from the same entries, so a lying one shows.
//
// When Redis is unreachable (a partitioned leader demoting itself is the
// interesting case), transitions wait in the buffer and are written once
// Redis answers again, marked Late; their placement on Redis's clock is as
// good as the instance's monotonic clock over the delay. A full buffer
// drops its oldest transition and counts it (Dropped, carried by the next
// entry), and every entry has a per-publisher sequence number, so an
// observer can tell a hole in an instance's record from a quiet instance.
//
// The stream shares the lease's Redis Cluster hash slot (it carries
// election.HashTag(group), like the fencing token and the runner's keys).
// The package imports the production elector only, never the harness.
package publish
