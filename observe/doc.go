// Package observe measures a live fleet from outside: it follows the
// transitions its instances publish (package publish) and the lease key in
// Redis, and turns them into the same model.Timeline, analysis and reports
// the harness makes of its own runs: overlaps, gaps, stale leadership,
// failovers.
//
// The harness measures with one clock it owns; an observer has none it can
// trust. Every time here is an estimate on Redis's clock (TIME), and every
// event carries how far off it may be (model.Event.Uncertainty):
//
//   - a published transition is placed by its instance's writes: each ties
//     the instance's monotonic clock to Redis's TIME, late by at most the
//     write's round trip, and the transition lies where they agree (widened
//     by 500 ppm of clock rate error over the distance), ± half the span
//     they leave. A partitioned leader's demotion, written seconds later,
//     is placed where it happened, by the quick writes around it; where the
//     writes disagree and nothing settles whether a write was held or the
//     clock stopped, the placement covers both and a note says so;
//   - a change of the lease key is seen by keyspace notifications where the
//     server sends them already (CONFIG GET), at the notification's
//     arrival ± the observer's round trip, and an expiry at the instant the
//     last PTTL read predicted; where they are off or CONFIG is refused
//     (managed Redis often does), by polling GET and PTTL every Interval,
//     ± half an interval. The lane used and its resolution are in every
//     report. The watch writes nothing to Redis unless
//     Options.EnableNotifications lets it add the missing notification
//     classes;
//   - the observer's own clock is tied to Redis's by TIME calls, taking the
//     one with the shortest round trip, ± half of it.
//
// Each instance's wall-clock offset (Redis − wall, from its quickest write)
// is estimated too and reported, so a lying clock shows; it is not used to
// place events.
//
// A watch is recorded as JSON lines (Recording: the watch's header, every
// stream entry, every change of holder, the end), written as it goes, and
// Build turns a Recording into a verdict.Result. A live watch and a recording
// read back later give the same report.
package observe
