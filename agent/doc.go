// Package agent makes a service a leaselab agent: a process the harness
// starts, faults (SIGKILL, SIGSTOP, SIGTERM, partitions through its own
// proxy, clock commands) and watches, in any language, by a small protocol of
// JSON lines.
//
// The model: the harness starts the agent with its Redis address and lease
// name in the environment (LEASELAB_REDIS_ADDR, LEASELAB_GROUP,
// LEASELAB_KEY, ...; see docs/agents.md). The agent's first line on stdout
// is a Hello (protocol version, instance id, lease key, capabilities); every
// later line is an Event (promoted, demoted with a reason, error, chore,
// task events, stopped, reply). The harness stamps each line with its own
// monotonic clock as it arrives — the agent's clock is never believed, since
// faults bend it — and uses the event's optional wall-clock T only to
// measure how late it stamped. The harness's Commands arrive on stdin (stop,
// clock, dispatch) for agents that declare the matching capability; stdin
// ending means the harness is gone and the agent should exit. stderr is the
// agent's log, kept in the run's directory.
//
// A Go service built on election or runner becomes an agent in a few lines:
//
//	ag := agent.New(agent.Options{OnStop: cancel})
//	e, promote, demote, errs := election.NewElector(opts)
//	promote, demote, errs = ag.Elector(e, promote, demote, errs)
//	_ = ag.Hello(e.ID(), e.Key())
//
// or RunElector, which does that, passes the signals on to the service and
// stops gracefully on ctx's end:
//
//	ag := agent.New(agent.Options{OnStop: cancel})
//	err := ag.RunElector(ctx, opts, agent.Service{Promoted: start, Demoted: stop})
//
// or, for a runner, runner.Options.OnEvent = ag.RunnerEvent and
// ag.Hello(r.ElectorID(), r.LeaseKey()). ParseHello, ParseEvent,
// ParseCommand and Decoder are the strict parsers both sides use: a line
// that is not valid protocol is refused with what is wrong with it.
//
// The hello may declare the service's Redis client (Client; GoRedisClient
// for go-redis, which RunElector declares by itself): the harness predicts
// the run's bounds for that client.
//
// The package depends on election, runner, go-redis and the standard
// library only.
package agent
