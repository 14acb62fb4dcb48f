// Package leasemetrics exports an elector's and a runner's leadership as
// Prometheus metrics, so that election and runner themselves depend on no
// metrics library.
//
// An Elector collector learns from three sources, none of which can slow
// the election: the elector's transition hook (election.Opts.OnTransition:
// promotions, demotions by reason, errors; a counter increment each), a
// go-redis hook on the elector's client that times the lease scripts it
// recognises by their SHA1 (election.ScriptOp), and, at scrape time, the
// clock. A Runner collector adds the runner's events (runner.Options.OnEvent:
// chores run and fenced, task outcomes, errors).
//
// Metric names follow the Prometheus conventions: the leaselab_ namespace,
// base units (seconds), _total on counters, a "group" label naming the
// lease, "reason", "op" and "chore" labels with small fixed value sets.
// Which instance a series belongs to is the scrape's own instance label.
//
//	leaselab_elector_is_leader{group}                       gauge: 1 while this instance believes it leads
//	leaselab_elector_lease_remaining_seconds{group}         gauge: send time of the last successful acquire or
//	                                                        renew + TTL − now, while leading (0 otherwise)
//	leaselab_elector_call_duration_seconds{group,op}        histogram: acquire, renew and release calls
//	leaselab_elector_elections_total{group}                 counter: promotions (elections won)
//	leaselab_elector_demotions_total{group,reason}          counter: lost, error, guard, stop
//	leaselab_elector_errors_total{group}                    counter: errors the elector reported
//	leaselab_runner_chores_total{group,chore}               counter: leader-only chores that ran
//	leaselab_runner_chores_fenced_total{group,chore}        counter: chores refused by the fence (safe mode)
//	leaselab_runner_tasks_total{group,outcome}              counter: completed, failed, dead_lettered
//	leaselab_runner_errors_total{group}                     counter: runner errors (the elector's included)
package leasemetrics
