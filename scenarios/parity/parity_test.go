package parity_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/virtual"
)

// TestGoAPIRefusesCrashThenPause is the gap issue 30 found: through the Go
// API a pause of an instance a crash took down for good was accepted,
// while the scenario file of the same schedule was refused.
func TestGoAPIRefusesCrashThenPause(t *testing.T) {
	sc := model.Scenario{
		Name: "crash-then-pause", Seed: 1,
		Faults: []model.Fault{
			{At: 2 * time.Second, Kind: model.FaultCrash, Target: model.Target{Indexes: []int{1}}},
			{At: 4 * time.Second, Kind: model.FaultPause, Target: model.Target{Indexes: []int{1}}},
		},
	}
	_, err := sim.Run(context.Background(), sc, virtual.Backend{}, sim.Options{})
	var verr *model.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("sim.Run = %v; want a *model.ValidationError", err)
	}
	if _, err := scenarios.Parse("x.yaml", []byte("seed: 1\nfaults:\n  - {at: 2s, kind: crash, target: 1}\n  - {at: 4s, kind: pause, target: 1}\n")); err == nil {
		t.Fatal("the scenario file parsed; want it refused")
	}
}

// twin is one scenario written both ways: as the lines a scenario file adds
// to "name: t, seed: 1, duration: 10s", and as the model.Scenario edit a Go
// caller makes to the same base.
type twin struct {
	yaml string
	edit func(*model.Scenario)
}

func (w twin) parse() (model.Scenario, error) {
	head := "seed: 1\nduration: 10s\n"
	if !strings.HasPrefix(w.yaml, "name:") {
		head = "name: t\n" + head
	}
	return scenarios.Parse("t.yaml", []byte(head+w.yaml))
}

func (w twin) scenario() model.Scenario {
	sc := model.Scenario{Name: "t", Seed: 1, Duration: 10 * time.Second}
	w.edit(&sc)
	return sc
}

func at(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func on(i ...int) model.Target { return model.Target{Indexes: i} }

// faults is an edit that sets the schedule.
func faults(fs ...model.Fault) func(*model.Scenario) {
	return func(sc *model.Scenario) { sc.Faults = fs }
}

// expect is an edit that sets the expectations.
func expect(xs ...model.Expectation) func(*model.Scenario) {
	return func(sc *model.Scenario) { sc.Expect = xs }
}

// parityCases are the rules a scenario is refused by, each as a refused
// scenario and its valid twin, written both ways. One case per rule that
// used to live in package scenarios (and so bound only scenario files),
// and the rules that were the model's already.
var parityCases = []struct {
	name      string
	bad, good twin
	// fieldOnly: the two ways count differently (the file's max_retries: 0
	// is the model's -1), so only the fields refused are compared.
	fieldOnly bool
}{
	// Fault combinations on one instance.
	{name: "crash-then-pause",
		bad:  twin{"faults:\n  - {at: 2s, kind: crash, target: 1}\n  - {at: 4s, kind: pause, target: 1}\n", faults(model.Fault{At: at(2), Kind: model.FaultCrash, Target: on(1)}, model.Fault{At: at(4), Kind: model.FaultPause, Target: on(1)})},
		good: twin{"faults:\n  - {at: 2s, for: 1s, kind: crash, target: 1, restart: true}\n  - {at: 4s, kind: pause, target: 1}\n", faults(model.Fault{At: at(2), For: at(1), Kind: model.FaultCrash, Target: on(1), Restart: true}, model.Fault{At: at(4), Kind: model.FaultPause, Target: on(1)})}},
	{name: "down-during-restart",
		bad:  twin{"faults:\n  - {at: 2s, for: 4s, kind: stop, target: 1, restart: true}\n  - {at: 3s, for: 1s, kind: pause, target: [0, 1]}\n", faults(model.Fault{At: at(2), For: at(4), Kind: model.FaultStop, Target: on(1), Restart: true}, model.Fault{At: at(3), For: at(1), Kind: model.FaultPause, Target: on(0, 1)})},
		good: twin{"faults:\n  - {at: 2s, for: 4s, kind: stop, target: 1, restart: true}\n  - {at: 3s, for: 1s, kind: partition, target: [0, 1]}\n", faults(model.Fault{At: at(2), For: at(4), Kind: model.FaultStop, Target: on(1), Restart: true}, model.Fault{At: at(3), For: at(1), Kind: model.FaultPartition, Target: on(0, 1)})}},
	{name: "two-of-a-kind-at-once",
		bad:  twin{"faults:\n  - {at: 1s, for: 4s, kind: partition, target: 0}\n  - {at: 3s, kind: partition, mode: reset, target: 0}\n", faults(model.Fault{At: at(1), For: at(4), Kind: model.FaultPartition, Target: on(0)}, model.Fault{At: at(3), Kind: model.FaultPartition, Mode: model.PartitionReset, Target: on(0)})},
		good: twin{"faults:\n  - {at: 1s, for: 4s, kind: partition, target: 0}\n  - {at: 5s, kind: partition, mode: reset, target: 0}\n", faults(model.Fault{At: at(1), For: at(4), Kind: model.FaultPartition, Target: on(0)}, model.Fault{At: at(5), Kind: model.FaultPartition, Mode: model.PartitionReset, Target: on(0)})}},
	{name: "pause-and-suspend-at-once",
		bad:  twin{"faults:\n  - {at: 1s, for: 4s, kind: pause, target: 0}\n  - {at: 3s, for: 1s, kind: suspend, target: 0}\n", faults(model.Fault{At: at(1), For: at(4), Kind: model.FaultPause, Target: on(0)}, model.Fault{At: at(3), For: at(1), Kind: model.FaultSuspend, Target: on(0)})},
		good: twin{"faults:\n  - {at: 1s, for: 4s, kind: pause, target: 0}\n  - {at: 5s, for: 1s, kind: suspend, target: 0}\n", faults(model.Fault{At: at(1), For: at(4), Kind: model.FaultPause, Target: on(0)}, model.Fault{At: at(5), For: at(1), Kind: model.FaultSuspend, Target: on(0)})}},
	{name: "failover-lag-holds-the-schedule",
		bad: twin{"redis: replicated\nfaults:\n  - {at: 3s, kind: redis-failover, lag: 2s}\n  - {at: 4s, for: 1s, kind: pause, target: 0}\n", func(sc *model.Scenario) {
			sc.Redis = model.RedisReplicated
			faults(model.Fault{At: at(3), Kind: model.FaultRedisFailover, Lag: at(2)}, model.Fault{At: at(4), For: at(1), Kind: model.FaultPause, Target: on(0)})(sc)
		}},
		good: twin{"redis: replicated\nfaults:\n  - {at: 3s, kind: redis-failover, lag: 2s}\n  - {at: 6s, for: 1s, kind: pause, target: 0}\n", func(sc *model.Scenario) {
			sc.Redis = model.RedisReplicated
			faults(model.Fault{At: at(3), Kind: model.FaultRedisFailover, Lag: at(2)}, model.Fault{At: at(6), For: at(1), Kind: model.FaultPause, Target: on(0)})(sc)
		}}},

	// A fault's times against the fault phase.
	{name: "at-the-end-of-the-phase",
		bad:  twin{"faults:\n  - {at: 10s, kind: pause, target: 0}\n", faults(model.Fault{At: at(10), Kind: model.FaultPause, Target: on(0)})},
		good: twin{"faults:\n  - {at: 9s, kind: pause, target: 0}\n", faults(model.Fault{At: at(9), Kind: model.FaultPause, Target: on(0)})}},
	{name: "ends-after-the-phase",
		bad:  twin{"faults:\n  - {at: 8s, for: 5s, kind: pause, target: 0}\n", faults(model.Fault{At: at(8), For: at(5), Kind: model.FaultPause, Target: on(0)})},
		good: twin{"faults:\n  - {at: 8s, for: 2s, kind: pause, target: 0}\n", faults(model.Fault{At: at(8), For: at(2), Kind: model.FaultPause, Target: on(0)})}},
	{name: "failover-after-the-phase",
		bad: twin{"redis: replicated\nfaults:\n  - {at: 9s, kind: redis-failover, lag: 2s}\n", func(sc *model.Scenario) {
			sc.Redis = model.RedisReplicated
			faults(model.Fault{At: at(9), Kind: model.FaultRedisFailover, Lag: at(2)})(sc)
		}},
		good: twin{"redis: replicated\nfaults:\n  - {at: 7s, kind: redis-failover, lag: 2s}\n", func(sc *model.Scenario) {
			sc.Redis = model.RedisReplicated
			faults(model.Fault{At: at(7), Kind: model.FaultRedisFailover, Lag: at(2)})(sc)
		}}},

	// Fields a fault's kind does not take.
	{name: "instant-with-for",
		bad:  twin{"faults:\n  - {at: 1s, for: 1s, kind: script-flush}\n", faults(model.Fault{At: at(1), For: at(1), Kind: model.FaultScriptFlush})},
		good: twin{"faults:\n  - {at: 1s, kind: script-flush}\n", faults(model.Fault{At: at(1), Kind: model.FaultScriptFlush})}},
	{name: "clock-jump-with-for",
		bad:  twin{"faults:\n  - {at: 1s, for: 1s, kind: clock, jump: -2s, target: 0}\n", faults(model.Fault{At: at(1), For: at(1), Kind: model.FaultClock, Jump: -at(2), Target: on(0)})},
		good: twin{"faults:\n  - {at: 1s, for: 1s, kind: clock, rate: 2, target: 0}\n", faults(model.Fault{At: at(1), For: at(1), Kind: model.FaultClock, Rate: 2, Target: on(0)})}},
	{name: "target-on-redis",
		bad:  twin{"faults:\n  - {at: 1s, kind: script-flush, target: leader}\n", faults(model.Fault{At: at(1), Kind: model.FaultScriptFlush, Target: model.Target{Role: model.RoleLeader}})},
		good: twin{"faults:\n  - {at: 1s, kind: script-flush}\n", faults(model.Fault{At: at(1), Kind: model.FaultScriptFlush})}},
	{name: "allow-skipped-on-redis",
		bad:  twin{"faults:\n  - {at: 1s, kind: redis-restart, allow_skipped: true}\n", faults(model.Fault{At: at(1), Kind: model.FaultRedisRestart, AllowSkipped: true})},
		good: twin{"faults:\n  - {at: 1s, kind: redis-restart}\n", faults(model.Fault{At: at(1), Kind: model.FaultRedisRestart})}},
	{name: "another-kinds-parameter",
		bad:  twin{"faults:\n  - {at: 1s, kind: partition, target: 0, restart: true, rate: 0.5}\n", faults(model.Fault{At: at(1), Kind: model.FaultPartition, Target: on(0), Restart: true, Rate: 0.5})},
		good: twin{"faults:\n  - {at: 1s, kind: crash, target: 0, restart: true}\n", faults(model.Fault{At: at(1), Kind: model.FaultCrash, Target: on(0), Restart: true})}},

	// Targets.
	{name: "index-out-of-range",
		bad: twin{"instances: 3\nfaults:\n  - {at: 1s, kind: pause, target: [0, 3]}\n", func(sc *model.Scenario) {
			sc.Instances = 3
			faults(model.Fault{At: at(1), Kind: model.FaultPause, Target: on(0, 3)})(sc)
		}},
		good: twin{"instances: 4\nfaults:\n  - {at: 1s, kind: pause, target: [0, 3]}\n", func(sc *model.Scenario) {
			sc.Instances = 4
			faults(model.Fault{At: at(1), Kind: model.FaultPause, Target: on(0, 3)})(sc)
		}}},
	{name: "index-twice",
		bad:  twin{"faults:\n  - {at: 1s, kind: pause, target: [1, 1]}\n", faults(model.Fault{At: at(1), Kind: model.FaultPause, Target: on(1, 1)})},
		good: twin{"faults:\n  - {at: 1s, kind: pause, target: [1, 2]}\n", faults(model.Fault{At: at(1), Kind: model.FaultPause, Target: on(1, 2)})}},
	{name: "unknown-role",
		bad:  twin{"faults:\n  - {at: 1s, kind: pause, target: leadr}\n", faults(model.Fault{At: at(1), Kind: model.FaultPause, Target: model.Target{Role: "leadr"}})},
		good: twin{"faults:\n  - {at: 1s, kind: pause, target: follower}\n", faults(model.Fault{At: at(1), Kind: model.FaultPause, Target: model.Target{Role: model.RoleFollower}})}},

	// A kind's own values.
	{name: "unknown-kind",
		bad:  twin{"faults:\n  - {at: 1s, kind: crsh, target: 0}\n", faults(model.Fault{At: at(1), Kind: "crsh", Target: on(0)})},
		good: twin{"faults:\n  - {at: 1s, kind: crash, target: 0}\n", faults(model.Fault{At: at(1), Kind: model.FaultCrash, Target: on(0)})}},
	{name: "partition-mode",
		bad:  twin{"faults:\n  - {at: 1s, kind: partition, mode: one-way, target: 0}\n", faults(model.Fault{At: at(1), Kind: model.FaultPartition, Mode: "one-way", Target: on(0)})},
		good: twin{"faults:\n  - {at: 1s, kind: partition, mode: blackhole-replies, target: 0}\n", faults(model.Fault{At: at(1), Kind: model.FaultPartition, Mode: model.PartitionBlackholeReplies, Target: on(0)})}},
	{name: "latency-jitter-and-direction",
		bad:  twin{"faults:\n  - {at: 1s, kind: latency, latency: 100ms, jitter: 200ms, direction: up}\n", faults(model.Fault{At: at(1), Kind: model.FaultLatency, Latency: 100 * time.Millisecond, Jitter: 200 * time.Millisecond, Direction: "up"})},
		good: twin{"faults:\n  - {at: 1s, kind: latency, latency: 100ms, jitter: 50ms, direction: replies}\n", faults(model.Fault{At: at(1), Kind: model.FaultLatency, Latency: 100 * time.Millisecond, Jitter: 50 * time.Millisecond, Direction: model.DirectionReplies})}},
	{name: "clock-without-rate-or-jump",
		bad:  twin{"faults:\n  - {at: 1s, kind: clock, target: 0}\n", faults(model.Fault{At: at(1), Kind: model.FaultClock, Target: on(0)})},
		good: twin{"faults:\n  - {at: 1s, kind: clock, jump: 2s, target: 0}\n", faults(model.Fault{At: at(1), Kind: model.FaultClock, Jump: at(2), Target: on(0)})}},
	{name: "kinds-and-topology",
		bad: twin{"redis: replicated\nfaults:\n  - {at: 1s, kind: redis-restart}\n  - {at: 2s, kind: slot-migration}\n", func(sc *model.Scenario) {
			sc.Redis = model.RedisReplicated
			faults(model.Fault{At: at(1), Kind: model.FaultRedisRestart}, model.Fault{At: at(2), Kind: model.FaultSlotMigration})(sc)
		}},
		good: twin{"redis: replicated\nfaults:\n  - {at: 1s, kind: redis-failover}\n", func(sc *model.Scenario) {
			sc.Redis = model.RedisReplicated
			faults(model.Fault{At: at(1), Kind: model.FaultRedisFailover})(sc)
		}}},
	{name: "failover-on-a-single-redis",
		bad:  twin{"faults:\n  - {at: 1s, kind: redis-failover}\n", faults(model.Fault{At: at(1), Kind: model.FaultRedisFailover})},
		good: twin{"faults:\n  - {at: 1s, kind: redis-restart}\n", faults(model.Fault{At: at(1), Kind: model.FaultRedisRestart})}},

	// The scenario's own fields.
	{name: "enums",
		bad: twin{"mode: runer\nredis: sharded\nbackend: procss\n", func(sc *model.Scenario) { sc.Mode, sc.Redis, sc.Backend = "runer", "sharded", "procss" }},
		good: twin{"mode: elector\nredis: single\nbackend: virtual\n", func(sc *model.Scenario) {
			sc.Mode, sc.Redis, sc.Backend = model.ModeElector, model.RedisSingle, "virtual"
		}}},
	{name: "instances",
		bad:  twin{"instances: 1001\n", func(sc *model.Scenario) { sc.Instances = 1001 }},
		good: twin{"instances: 5\n", func(sc *model.Scenario) { sc.Instances = 5 }}},
	{name: "agent-on-another-backend",
		bad: twin{"backend: virtual\nagent: {command: [my-agent]}\n", func(sc *model.Scenario) {
			sc.Backend, sc.Agent = "virtual", &model.Agent{Command: []string{"my-agent"}}
		}},
		good: twin{"backend: virtual\n", func(sc *model.Scenario) { sc.Backend = "virtual" }}},
	{name: "agent-without-a-program",
		bad:  twin{"backend: process\nagent: {command: [' ', x]}\n", func(sc *model.Scenario) { sc.Backend, sc.Agent = "process", &model.Agent{Command: []string{" ", "x"}} }},
		good: twin{"backend: process\n", func(sc *model.Scenario) { sc.Backend = "process" }}},
	{name: "safe-margin-without-safe",
		bad:  twin{"elector: {safe_margin: 10ms}\n", func(sc *model.Scenario) { sc.Params.SafeMargin = 10 * time.Millisecond }},
		good: twin{"elector: {safe: true, safe_margin: 10ms}\n", func(sc *model.Scenario) { sc.Params.Safe, sc.Params.SafeMargin = true, 10*time.Millisecond }}},
	{name: "workload-of-electors",
		bad:  twin{"workload: {dispatch_rate: 5}\n", func(sc *model.Scenario) { sc.Workload.DispatchRate = 5 }},
		good: twin{"mode: runner\nworkload: {dispatch_rate: 5}\n", func(sc *model.Scenario) { sc.Mode, sc.Workload.DispatchRate = model.ModeRunner, 5 }}},
	{name: "client-ranges", fieldOnly: true,
		bad:  twin{"client: {max_retries: 101, pool_size: 10001}\n", func(sc *model.Scenario) { sc.Params.Client.MaxRetries, sc.Params.Client.PoolSize = 101, 10001 }},
		good: twin{"client: {max_retries: 100, pool_size: 10000}\n", func(sc *model.Scenario) { sc.Params.Client.MaxRetries, sc.Params.Client.PoolSize = 100, 10000 }}},
	{name: "negative-durations", fieldOnly: true, // the file says "must be positive": its 0 is refused as well
		bad: twin{"mode: runner\nchore_interval: -1s\nclient: {dial_timeout: -1s, read_timeout: -2s}\nworkload: {delay: -1s, task_duration: -1ms}\n", func(sc *model.Scenario) {
			sc.Mode, sc.Params.ChoreInterval, sc.Params.Client.DialTimeout, sc.Params.Client.ReadTimeout = model.ModeRunner, -time.Second, -time.Second, -2*time.Second
			sc.Workload.Delay, sc.Workload.TaskDuration = -time.Second, -time.Millisecond
		}},
		good: twin{"mode: runner\nchore_interval: 1s\nclient: {dial_timeout: 1s, read_timeout: none}\nworkload: {delay: 1s, task_duration: 1ms}\n", func(sc *model.Scenario) {
			sc.Mode, sc.Params.ChoreInterval, sc.Params.Client.DialTimeout, sc.Params.Client.ReadTimeout = model.ModeRunner, time.Second, time.Second, -1
			sc.Workload.Delay, sc.Workload.TaskDuration = time.Second, time.Millisecond
		}}},
	{name: "name",
		bad:  twin{"name: my test\n", func(sc *model.Scenario) { sc.Name = "my test" }},
		good: twin{"name: my-test\n", func(sc *model.Scenario) { sc.Name = "my-test" }}},
	{name: "starts-and-timings-once-scaled",
		bad: twin{"starts: [0s, 10s]\ntime_scale: 0.2\nelector: {ttl: 5ms, wait: 1s}\n", func(sc *model.Scenario) {
			sc.Starts, sc.TimeScale, sc.Params.TTL, sc.Params.Wait = []time.Duration{0, at(10)}, 0.2, 5*time.Millisecond, time.Second
		}},
		good: twin{"starts: [0s, 9s]\ntime_scale: 0.2\nelector: {ttl: 20ms, wait: 1s}\n", func(sc *model.Scenario) {
			sc.Starts, sc.TimeScale, sc.Params.TTL, sc.Params.Wait = []time.Duration{0, at(9)}, 0.2, 20*time.Millisecond, time.Second
		}}},

	{name: "time-scale-hides-no-fault-problem",
		bad: twin{"time_scale: 0.001\nfaults:\n  - {at: 1s, kind: crsh, target: 0}\n", func(sc *model.Scenario) {
			sc.TimeScale = 0.001
			faults(model.Fault{At: at(1), Kind: "crsh", Target: on(0)})(sc)
		}},
		good: twin{"time_scale: 0.01\nfaults:\n  - {at: 1s, kind: crash, target: 0}\n", func(sc *model.Scenario) {
			sc.TimeScale = 0.01
			faults(model.Fault{At: at(1), Kind: model.FaultCrash, Target: on(0)})(sc)
		}}},

	// Expectations that cannot apply.
	{name: "runner-metric-of-electors",
		bad:  twin{"expect: {lost_tasks: 0}\n", expect(model.Expectation{Metric: "lost_tasks", Max: "0"})},
		good: twin{"expect: {leader_changes: 0}\n", expect(model.Expectation{Metric: "leader_changes", Max: "0"})}},
	{name: "no-limit",
		bad:  twin{"expect: {max_gap: {slack: 100ms}}\n", expect(model.Expectation{Metric: "max_gap", Slack: 100 * time.Millisecond})},
		good: twin{"expect: {max_gap: {max: predicted, slack: 100ms}}\n", expect(model.Expectation{Metric: "max_gap", Max: "predicted", Slack: 100 * time.Millisecond})}},
	{name: "count-limits",
		bad:  twin{"expect: {gaps: predicted, leader_changes: -1, overlap_windows: {min: 3, max: 1}}\n", expect(model.Expectation{Metric: "gaps", Max: "predicted"}, model.Expectation{Metric: "leader_changes", Max: "-1"}, model.Expectation{Metric: "overlap_windows", Min: "3", Max: "1"})},
		good: twin{"expect: {gaps: 1, leader_changes: 0, overlap_windows: {min: 1, max: 3}}\n", expect(model.Expectation{Metric: "gaps", Max: "1"}, model.Expectation{Metric: "leader_changes", Max: "0"}, model.Expectation{Metric: "overlap_windows", Min: "1", Max: "3"})}},
	{name: "duration-limits",
		bad: twin{"expect: {max_gap: ttl + wiat, max_overlap: ttl - wait, failover: {min: predicted}, heal_to_stable: {min: 5s, max: 2s}, stale_leadership: {max: 1s, slack: 1s}}\n", expect(
			model.Expectation{Metric: "max_gap", Max: "ttl + wiat"}, model.Expectation{Metric: "max_overlap", Max: "ttl - wait"},
			model.Expectation{Metric: "failover", Min: "predicted"}, model.Expectation{Metric: "heal_to_stable", Min: "5s", Max: "2s"},
			model.Expectation{Metric: "stale_leadership", Max: "1s", Slack: time.Second})},
		good: twin{"expect: {max_gap: ttl + wait, max_overlap: wait - ttl, failover: {min: 1s}, heal_to_stable: {min: 2s, max: 5s}, stale_leadership: {max: predicted, slack: 1s}}\n", expect(
			model.Expectation{Metric: "max_gap", Max: "ttl + wait"}, model.Expectation{Metric: "max_overlap", Max: "wait - ttl"},
			model.Expectation{Metric: "failover", Min: "1s"}, model.Expectation{Metric: "heal_to_stable", Min: "2s", Max: "5s"},
			model.Expectation{Metric: "stale_leadership", Max: "predicted", Slack: time.Second})}},
}

// lineRef is how a scenario file names a fault's line beside it.
var lineRef = regexp.MustCompile(` \(line \d+\)`)

// TestBothPathsRefuseTheSame runs each case through both ways in: sim.Run
// with the model.Scenario on the virtual backend, and scenarios.Parse of
// the file. Both refuse the bad twin, for the same problems (the same
// fields, the same words; the file's adds lines), and both accept the good
// one, which is the same scenario either way.
func TestBothPathsRefuseTheSame(t *testing.T) {
	for _, c := range parityCases {
		t.Run(c.name, func(t *testing.T) {
			_, ferr := c.bad.parse()
			var perr *scenarios.Error
			if !errors.As(ferr, &perr) {
				t.Fatalf("the file: %v; want a *scenarios.Error", ferr)
			}
			_, gerr := sim.Run(context.Background(), c.bad.scenario(), virtual.Backend{}, sim.Options{SkipAnalysis: true})
			var verr *model.ValidationError
			if !errors.As(gerr, &verr) {
				t.Fatalf("sim.Run: %v; want a *model.ValidationError (the file is refused with\n%v)", gerr, ferr)
			}
			var fromFile, fromGo []string
			for _, p := range perr.Problems {
				fromFile = append(fromFile, problem(p.Field, lineRef.ReplaceAllString(p.Msg, ""), c.fieldOnly))
			}
			for _, p := range verr.Problems {
				fromGo = append(fromGo, problem(p.Field, p.Msg, c.fieldOnly))
			}
			slices.Sort(fromFile)
			slices.Sort(fromGo)
			if !slices.Equal(fromFile, fromGo) {
				t.Errorf("the two ways refuse for different reasons\nthe file: %q\nsim.Run:  %q", fromFile, fromGo)
			}

			sc, err := c.good.parse()
			if err != nil {
				t.Fatalf("the valid twin's file: %v", err)
			}
			gsc := c.good.scenario()
			if got, want := withoutLines(sc).WithDefaults(), gsc.WithDefaults(); !reflect.DeepEqual(got, want) {
				t.Fatalf("the twins differ\nthe file: %+v\nthe Go:   %+v", got, want)
			}
			_, err = sim.Run(context.Background(), gsc, virtual.Backend{}, sim.Options{SkipAnalysis: true})
			if err != nil && !sim.IsRefusal(err) { // a backend may refuse what it cannot run (runner mode)
				t.Errorf("sim.Run of the valid twin: %v", err)
			}
		})
	}
}

func problem(field, msg string, fieldOnly bool) string {
	if fieldOnly {
		return field
	}
	return fmt.Sprintf("%s: %s", field, msg)
}

func withoutLines(sc model.Scenario) model.Scenario {
	sc.Expect = slices.Clone(sc.Expect)
	for i := range sc.Expect {
		sc.Expect[i].Line = 0
	}
	return sc
}
