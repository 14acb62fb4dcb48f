package realtime

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redisserver"
	"github.com/leaselab/leaselab/internal/stallmeter"
	"github.com/leaselab/leaselab/internal/version"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/publish"
	"github.com/leaselab/leaselab/runner"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/faults"
)

// Engine runs scenarios in real time, with the instances its Spawner
// makes. The zero value is not usable: Spawn is required.
type Engine struct {
	// Provider sets up Redis and Toxiproxy. Default env.Embedded{}.
	Provider env.Provider
	// Spawn makes each instance's shell (sim/real: goroutines; sim/process:
	// agent processes). Required.
	Spawn Spawner
	// Publish makes every instance publish its transitions as production
	// does (package publish), to the stream of the group named after the
	// scenario (its lease is then election.LeaderKey(scenario name), not a
	// per-run name: two runs of one scenario must not share a Redis at
	// once), so that chaos observe can watch the run from outside.
	Publish bool
	// OnPublish, with Publish, is called once the environment is up with
	// the group and the Redis address an observer should watch.
	OnPublish func(group, redisAddr string)
}

// quietRedis silences go-redis's global logger: the harness cuts instances
// off on purpose, and every failed dial would be logged to stderr.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

var quietRedisOnce sync.Once

// run is the state of one Run.
type run struct {
	sc        model.Scenario // effective (defaults, scaled)
	env       *env.Environment
	rec       *Recorder
	truth     *Truth
	admin     *redis.Client
	group     string
	publish   bool                  // instances publish their transitions (Engine.Publish)
	proxies   [][]*toxiclient.Proxy // per instance: its proxy, or one per cluster node
	instances []Shell
	starts    []int // per instance: its Starts so far (start), the schedule's goroutine's
	// refused counts the refuse partitions on each proxy (faultWorld.refuse),
	// the schedule's goroutine's.
	refused map[*toxiclient.Proxy]int

	// A restart after a graceful stop waits for the stop to wind down
	// off the schedule's goroutine (faultWorld.Restart): winding marks an
	// instance stopped since its last start, pending one whose restart
	// waits (both the schedule's goroutine's); each waiter sends the index
	// on downs once it is down, and the schedule's goroutine starts it
	// (until). over is closed when the schedule ends: nothing is started
	// after it.
	winding, pending []bool
	downs            chan int
	over             chan struct{}
	waiters          sync.WaitGroup

	jitterSeed uint64
	jitterN    uint64
	jitterMu   sync.Mutex

	errMu sync.Mutex
	errs  []string
}

// fail notes a harness error; the run goes on, the result says it.
func (r *run) fail(err error) {
	r.errMu.Lock()
	r.errs = append(r.errs, err.Error())
	r.errMu.Unlock()
}

// jitterSource returns a seeded source of election jitter for one
// incarnation, so a run's jitter is reproducible from its seed.
func (r *run) jitterSource() func(n int) int {
	r.jitterMu.Lock()
	r.jitterN++
	rng := mrand.New(mrand.NewPCG(r.jitterSeed, r.jitterN))
	r.jitterMu.Unlock()
	var mu sync.Mutex
	return func(n int) int {
		mu.Lock()
		defer mu.Unlock()
		return rng.IntN(n)
	}
}

// Tasks is the task registry of the runner-mode instances of eff (an
// effective, scaled scenario): one task, "work", that takes the workload's
// TaskDuration, with sim.TaskTimeout.
func Tasks(eff model.Scenario) map[string]runner.Task {
	d := eff.Workload.TaskDuration
	return map[string]runner.Task{
		"work": {Handler: func(ctx context.Context, _ []byte) error {
			select {
			case <-time.After(d):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}, Timeout: sim.TaskTimeout(eff)},
	}
}

func newRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// ErrOwnRedis is Refuses's answer for a scenario on redis: replicated or
// cluster when the run was given a Redis of its own (an address, a URL,
// containers, a compose stack): those topologies run only on servers the
// harness spawns, since it must fail them over.
var ErrOwnRedis = errors.New("sim: redis: replicated and redis: cluster run on servers the harness spawns (the embedded environment), not on a Redis given to the run")

// ErrPublishCluster is Refuses's answer for a scenario on redis: cluster
// with Publish: an observer follows one node.
var ErrPublishCluster = errors.New("sim: publishing (--publish) is for a single or replicated Redis, which an observer follows on one node; not redis: cluster")

// Refuses returns why the engine refuses the scenario with its provider
// (ErrOwnRedis), or nil if it can run it.
func (b Engine) Refuses(sc model.Scenario) error {
	if b.Publish && sc.WithDefaults().Redis == model.RedisCluster {
		return ErrPublishCluster
	}
	p := b.Provider
	if sc.WithDefaults().Redis == model.RedisSingle || p == nil {
		return nil
	}
	if emb, ok := p.(env.Embedded); ok && emb.RedisAddr == "" {
		return nil
	}
	return ErrOwnRedis
}

// Run runs eff (validated, defaults filled, scaled) against real Redis and
// Toxiproxy, with the instances b.Spawn makes, and returns what it
// recorded; see sim.Backend.Run.
//
// Two process-wide settings change for good: go-redis's global logger is
// silenced (every dial an injected fault fails would be logged to stderr),
// and, with the in-process Toxiproxy, zerolog's global level is disabled
// (Toxiproxy logs through it). A program that wants them restores them
// after Run.
func (b Engine) Run(ctx context.Context, eff model.Scenario, observe func(model.Event)) (res *sim.Recording, err error) {
	if b.Spawn == nil {
		return nil, errors.New("realtime: Engine.Spawn is nil: no way to start an instance")
	}
	quietRedisOnce.Do(func() { redis.SetLogger(quietRedis{}) })
	provider := b.Provider
	if eff.Redis != model.RedisSingle {
		// A replicated pair or a cluster is always spawned: the harness
		// must own it to fail it over.
		emb, _ := provider.(env.Embedded)
		provider = env.Spawned{Redis: eff.Redis, RedisServer: emb.RedisServer, ToxiproxyAddr: emb.ToxiproxyAddr}
	}
	if provider == nil {
		provider = env.Embedded{}
	}
	res = &sim.Recording{RunID: newRunID(), Started: time.Now()}
	res.Versions = verdict.Versions{Go: runtime.Version(), Toxiproxy: env.ToxiproxyVersion, Leaselab: version.Leaselab()}

	setupStart := time.Now()
	environ, err := env.For(ctx, provider, eff.Instances)
	if err != nil {
		return nil, err
	}
	res.Versions.Redis = environ.RedisVersion
	r := &run{
		sc:         eff,
		env:        environ,
		group:      "leaselab-" + eff.Name + "-" + res.RunID,
		publish:    b.Publish,
		jitterSeed: uint64(eff.Seed),
	}
	var cpuStart time.Duration
	defer func() {
		cleanupErr := r.teardown()
		if cleanupErr != nil {
			r.fail(fmt.Errorf("cleaning up: %w", cleanupErr))
		}
		if res != nil {
			// Under errMu: an agent's reader may have failed the run
			// from its own goroutine (a refused line).
			r.errMu.Lock()
			res.Errors = append(res.Errors, r.errs...)
			r.errMu.Unlock()
		}
	}()
	r.admin = redis.NewClient(environ.Auth.Apply(&redis.Options{Addr: environ.RedisAddr, MaxRetries: -1}))
	if res.Versions.Redis == "" {
		if info, err := r.admin.Info(ctx, "server").Result(); err == nil {
			res.Versions.Redis = redisserver.InfoField(info, "redis_version")
		} else {
			return nil, fmt.Errorf("%w: Redis at %s: %v", env.ErrEnvironment, environ.RedisAddr, err)
		}
	}
	if err := needsRestart(eff.Faults, environ); err != nil {
		return nil, err
	}
	if r.publish {
		// The group is the scenario's name: a fresh stream and lease for
		// this run (an observer that already follows the stream reads on).
		r.group = eff.Name
		if err := r.admin.Del(ctx, publish.StreamKey(r.group), election.LeaderKey(r.group)).Err(); err != nil {
			return nil, fmt.Errorf("%w: clearing the transitions stream of %s: %v", env.ErrEnvironment, r.group, err)
		}
		if b.OnPublish != nil {
			b.OnPublish(r.group, environ.RedisAddr)
		}
	}

	var slots []Slot
	for i := range eff.Instances {
		proxy := func(name, upstream string) (string, error) {
			var p *toxiclient.Proxy
			// A port the environment found free can be taken before the
			// proxy listens on it (another harness on the machine): the
			// next one then.
			for try := 0; ; try++ {
				listen := "127.0.0.1:0"
				if environ.ProxyListen != nil {
					listen = environ.ProxyListen(i)
				}
				p, err = environ.Toxiproxy.CreateProxy(name, listen, upstream)
				if err == nil {
					break
				}
				if try == 2 || environ.ProxyListen == nil || !strings.Contains(err.Error(), "address already in use") {
					return "", fmt.Errorf("%w: creating proxy %s: %v", env.ErrEnvironment, name, err)
				}
			}
			for len(r.proxies) <= i {
				r.proxies = append(r.proxies, nil)
			}
			r.proxies[i] = append(r.proxies[i], p)
			dial := p.Listen
			if environ.DialAddr != nil {
				dial = environ.DialAddr(dial)
			}
			return dial, nil
		}
		slot := Slot{Index: i, Scenario: eff, Group: r.group, Env: environ, Fail: r.fail, Publish: r.publish, JitterSource: r.jitterSource}
		if t := environ.Topology; t != nil && t.Kind == model.RedisCluster {
			slot.Nodes = map[string]string{}
			for k, node := range t.Nodes {
				if slot.Nodes[node], err = proxy(fmt.Sprintf("%s-%d-node%d", r.group, i, k), node); err != nil {
					return nil, err
				}
			}
		} else if slot.Dial, err = proxy(fmt.Sprintf("%s-%d", r.group, i), environ.ProxyUpstream); err != nil {
			return nil, err
		}
		slots = append(slots, slot)
	}

	r.rec = NewRecorder(observe)
	for _, slot := range slots {
		slot.Recorder = r.rec
		sh, err := b.Spawn(slot)
		if err != nil {
			return nil, err
		}
		r.instances = append(r.instances, sh)
	}
	r.starts = make([]int, len(r.instances))
	r.winding, r.pending = make([]bool, len(r.instances)), make([]bool, len(r.instances))
	r.downs, r.over = make(chan int), make(chan struct{})
	key := election.LeaderKey(r.group)
	truthAddr := environ.RedisAddr
	if t := environ.Topology; t != nil {
		if truthAddr, err = t.Serving(ctx, key); err != nil {
			return nil, fmt.Errorf("%w: finding the node that serves the lease: %v", env.ErrEnvironment, err)
		}
	}
	if r.truth, err = WatchTruthAuth(ctx, truthAddr, environ.Auth, key, r.rec); err != nil {
		return nil, fmt.Errorf("%w: watching the lease in Redis: %v", env.ErrEnvironment, err)
	}
	res.Setup = time.Since(setupStart)
	cpuStart = cpuTime()

	// The harness's own goroutines woken late are the machine's load,
	// which the verdicts count (analysis.Stall): the instances' goroutines
	// (their calls' replies, their timeouts) were held up as much.
	unprobe := stallmeter.Subscribe(analysis.MinStall, func(late time.Duration) {
		r.rec.Record(model.Event{Kind: model.StallKind, Instance: -1, Lateness: late})
	})
	runErr := r.execute(ctx)
	unprobe()
	end := r.rec.Since()
	ended := "complete"
	if runErr != nil {
		ended = "incomplete: " + runErr.Error()
	}
	r.recordHeld()
	r.rec.Record(model.Event{Kind: model.RunEnded, Instance: -1, Detail: ended})
	res.Elapsed = end
	cpu := cpuTime() - cpuStart
	res.Cost = verdict.Cost{CPU: cpu, CPUPerInstancePercent: 100 * cpu.Seconds() / end.Seconds() / float64(eff.Instances)}
	r.stopAll()
	res.Timeline = r.rec.Timeline()
	return res, runErr
}

// execute starts the instances, runs the fault schedule and the recovery.
func (r *run) execute(ctx context.Context) error {
	var (
		pre    sync.WaitGroup
		preMu  sync.Mutex
		preErr error
		began  time.Time // the earliest prestarted instance's start
	)
	for i, in := range r.instances {
		if i < len(r.sc.Starts) && r.sc.Starts[i] > 0 {
			continue // started later by the plan: launched then, not now
		}
		if p, ok := in.(Prestarter); ok {
			pre.Go(func() {
				t, err := p.Prestart(ctx)
				preMu.Lock()
				defer preMu.Unlock()
				if err != nil {
					if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
						preErr = errors.Join(preErr, err)
					}
					return
				}
				if began.IsZero() || t.Before(began) {
					began = t
				}
			})
		}
	}
	pre.Wait()
	if err := ctx.Err(); err != nil {
		// Cancelled during the start-up: every Prestart gave up, with
		// ctx's error; one that had failed on its own first says so too.
		return errors.Join(err, preErr)
	}
	if preErr != nil {
		return preErr
	}
	if began.IsZero() {
		began = time.Now() // in-process instances begin at their Start, now
	}
	// The schedule counts from when the first instance began, not from
	// before the environment was watched and the agents launched: that
	// setup (an agent's start-up 30-570 ms here, the truth lane's 2-150 ms
	// in-process) would otherwise shift every fault against the elections'
	// phase, which a slow clock fault multiplies (issue 24's calibration).
	r.rec.Rebase(began)
	plan := r.sc.FaultPlan()
	for i := range r.instances {
		if i < len(r.sc.Starts) && r.sc.Starts[i] > 0 {
			continue // a delayed start: the plan's
		}
		if err := r.start(i); err != nil {
			return err
		}
	}
	// The workload runs through the fault phase only: the recovery period
	// lets what it dispatched drain, so a task still not done at the end
	// is lost, not merely late.
	stopWork := sync.OnceFunc(r.workload())
	defer stopWork()

	// The faults: the one driver every backend shares (package faults),
	// over this run's primitives. Whatever is active when the run ends
	// early (cancelled, an instance that failed to start) is healed too,
	// once every instance is killed: a heal then neither waits out a
	// graceful stop nor starts an instance after the run's end.
	driver := faults.New(r.sc, (*faultWorld)(r))
	healed := false
	defer func() {
		close(r.over)
		if !healed {
			r.stopAll()
			driver.End()
		}
	}()
	for _, a := range plan {
		if err := r.until(ctx, a.At); err != nil {
			return err
		}
		switch a.Kind {
		case model.ActionStart:
			if up(r.instances[a.Index]) || r.pending[a.Index] {
				continue // a crash's restart started it already, or will
			}
			if err := r.start(a.Index); err != nil {
				return err
			}
		case model.ActionHeal:
			driver.Heal(a.Index)
		case model.ActionInject:
			driver.Inject(ctx, a.Index)
		}
	}
	if err := r.until(ctx, r.sc.Duration); err != nil {
		return err
	}
	stopWork()
	driver.HealAll()
	healed = true
	for slices.Contains(r.pending, true) {
		select {
		case i := <-r.downs:
			r.restartDown(i)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// The recovery is counted from the moment everything is healed and
	// every instance started is running, not from the schedule: a heal
	// that restarts an instance can run late on a loaded machine, an agent
	// restarted (or started late) takes its start-up to run, and the
	// recovery must still be the whole period in which the last dispatched
	// tasks drain and leadership settles.
	for _, in := range r.instances {
		if p, ok := in.(Prestarter); ok {
			p.Started(ctx)
		}
	}
	return sleepUntil(ctx, r.rec, max(r.rec.Since(), r.sc.Duration)+r.sc.Recovery)
}

// start starts instance i's next incarnation, counting it: the count is
// the incarnation's token (faultWorld.Incarnation).
func (r *run) start(i int) error {
	r.starts[i]++
	r.winding[i] = false
	return r.instances[i].Start()
}

// until waits until the run's clock reads at, or ctx is done, starting
// meanwhile each instance whose restart waited for its graceful stop to
// wind down (faultWorld.Restart) as it comes down.
func (r *run) until(ctx context.Context, at time.Duration) error {
	for {
		d := at - r.rec.Since()
		if d <= 0 {
			return ctx.Err()
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case i := <-r.downs:
			t.Stop()
			r.restartDown(i)
		}
	}
}

// restartDown starts instance i, whose restart waited for it to wind
// down, unless it is up again already.
func (r *run) restartDown(i int) {
	r.pending[i] = false
	if up(r.instances[i]) {
		return
	}
	if err := r.start(i); err != nil {
		r.fail(fmt.Errorf("restarting instance %d: %w", i, err))
	}
}

// sleepUntil waits until the run's clock reads at, or ctx is done.
func sleepUntil(ctx context.Context, rec *Recorder, at time.Duration) error {
	d := at - rec.Since()
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// workload dispatches the scenario's tasks through live runner instances,
// and returns what stops it.
func (r *run) workload() func() {
	w := r.sc.Workload
	if r.sc.Mode != model.ModeRunner || (w.DispatchRate <= 0 && w.DelayedRate <= 0) {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	rng := mrand.New(mrand.NewPCG(uint64(r.sc.Seed), 1<<32))
	var rngMu sync.Mutex
	via := func() Shell {
		rngMu.Lock()
		defer rngMu.Unlock()
		start := rng.IntN(len(r.instances))
		for k := range r.instances {
			if in := r.instances[(start+k)%len(r.instances)]; in.Live() {
				return in
			}
		}
		return nil
	}
	loop := func(rate float64, delay time.Duration) {
		defer wg.Done()
		t := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if in := via(); in != nil {
					// A partitioned instance fails to dispatch: the task
					// was never dispatched, and is not counted.
					dctx, cancel := context.WithTimeout(ctx, time.Second)
					_ = in.Dispatch(dctx, delay)
					cancel()
				}
			}
		}
	}
	if w.DispatchRate > 0 {
		wg.Add(1)
		go loop(w.DispatchRate, 0)
	}
	if w.DelayedRate > 0 {
		wg.Add(1)
		go loop(w.DelayedRate, w.Delay)
	}
	return func() { cancel(); wg.Wait() }
}

// recordHeld records, in runner mode, every task the group still holds in
// Redis at the end (TaskHeld): a task not completed by then is late, not
// lost, while Redis still has it to run.
func (r *run) recordHeld() {
	if r.sc.Mode != model.ModeRunner {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var rdb redis.Scripter = r.admin
	if t := r.env.Topology; t != nil {
		addr, err := t.Serving(ctx, election.LeaderKey(r.group))
		if err != nil {
			r.fail(fmt.Errorf("listing the tasks left in Redis: %w", err))
			return
		}
		c := redis.NewClient(r.env.Auth.Apply(&redis.Options{Addr: addr, MaxRetries: -1}))
		defer c.Close()
		rdb = c
	}
	h, err := runner.Held(ctx, rdb, r.group)
	if err != nil {
		r.fail(fmt.Errorf("listing the tasks left in Redis: %w", err))
		return
	}
	for _, id := range h.Stream {
		r.rec.Record(model.Event{Kind: model.TaskHeld, Instance: -1, Task: id, Detail: "stream"})
	}
	for _, id := range h.Delayed {
		r.rec.Record(model.Event{Kind: model.TaskHeld, Instance: -1, Task: id, Detail: "delayed"})
	}
	for _, id := range h.Dead {
		r.rec.Record(model.Event{Kind: model.TaskHeld, Instance: -1, Task: id, Detail: "dead"})
	}
}

// stopAll ends every live instance at the end of the run. They are killed,
// not stopped: the run has ended (RunEnded is recorded), and a graceful stop
// would only add a release the analysis does not look at (publishing
// instances excepted: see sim/real's Kill).
func (r *run) stopAll() {
	for _, in := range r.instances {
		in.Kill()
	}
	for _, in := range r.instances {
		in.Wait()
	}
	r.waiters.Wait() // each now down, its waiter sees the schedule over
}

// teardown releases everything the run started, whatever state it is in.
func (r *run) teardown() error {
	r.stopAll()
	var errs []error
	if r.truth != nil {
		errs = append(errs, r.truth.Close())
	}
	for _, ps := range r.proxies {
		for _, p := range ps {
			errs = append(errs, p.Delete())
		}
	}
	if r.admin != nil {
		if r.group != "" && r.env.Topology == nil {
			// Leave an external Redis as it was found.
			_ = r.admin.Del(context.Background(), election.LeaderKey(r.group)).Err()
		}
		errs = append(errs, r.admin.Close())
	}
	if r.env != nil && r.env.Close != nil {
		errs = append(errs, r.env.Close())
	}
	return errors.Join(errs...)
}

// needsRestart checks that the environment can do every fault asked for.
func needsRestart(faults []model.Fault, environ *env.Environment) error {
	for i, f := range faults {
		if k, _ := model.SpecOf(f.Kind); k.Needs.OwnedRedis && environ.RestartRedis == nil {
			return fmt.Errorf("faults[%d]: %s needs a Redis the harness owns; this environment uses an external one", i, f.Kind)
		}
	}
	return nil
}

// cpuTime is the CPU this process has used, user plus system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
