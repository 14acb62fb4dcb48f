package sweep

import (
	"github.com/leaselab/leaselab/model/bounds"

	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/virtual"
)

// Constraints are what the user must keep, in the worst case of the
// envelope.
type Constraints struct {
	// MaxGap bounds the longest leaderless interval; required (> 0).
	MaxGap time.Duration `json:"max_gap"`
	// MaxOverlap bounds believed split brain; 0 allows none, NoLimit: none.
	MaxOverlap time.Duration `json:"max_overlap"`
	// MaxStale bounds stale leadership (believing while Redis holds another
	// value); 0 allows none, NoLimit: none.
	MaxStale time.Duration `json:"max_stale"`
	// NoStaleWrites: a stale leader's writes must not land, so either no
	// stale leadership is predicted or safe mode's fence refuses them.
	NoStaleWrites bool `json:"no_stale_writes,omitempty"`
	// MaxDuplicateChores bounds a runner's duplicate chores per failover
	// (the same leader-only chore run by two instances within one chore
	// interval; three chores a tick), by bounds.ChoreBoundFor over the
	// envelope's modes (clock drift has no chore bound and is left out);
	// nil: none. Confirmed on the virtual backend in runner mode.
	MaxDuplicateChores *int `json:"max_duplicate_chores,omitempty"`
}

// Envelope is the platform's fault envelope: what the timings must survive.
type Envelope struct {
	// LatencyP99 is the p99 one-way latency to Redis in normal operation:
	// client read timeouts must stay well above its round trip. LatencyMax
	// is the worst one-way latency spike to survive (the latency mode).
	LatencyP99 time.Duration `json:"latency_p99"`
	LatencyMax time.Duration `json:"latency_max"`
	// MaxPause is the longest process pause (GC, VM steal, SIGSTOP): the
	// instance's clock runs on, so its overdue timers fire at the resume.
	MaxPause time.Duration `json:"max_pause"`
	// MaxSuspend is the longest suspend of an instance's VM or host (a
	// live migration's stun, a snapshot, a laptop lid closed): its clock
	// stops with it, so its renewal fires that much late wherever in the
	// lease the suspend began (the suspend mode). 0: none.
	MaxSuspend time.Duration `json:"max_suspend,omitempty"`
	// MaxRedisPause is the longest pause of Redis's writes (CLIENT PAUSE
	// WRITE: a FAILOVER's, or maintenance): renewals block while the key's
	// time runs on (the redis-pause mode). 0: none.
	MaxRedisPause time.Duration `json:"max_redis_pause,omitempty"`
	// MaxClockDrift is how much slower than real time an instance's clock
	// may run, as a fraction: 0.01 = 1% slow (rate 0.99).
	MaxClockDrift float64 `json:"max_clock_drift"`
	// Partitions are the partition modes to survive (model.PartitionModes:
	// blackhole, refuse, reset, blackhole-requests, blackhole-replies).
	Partitions []string `json:"partitions,omitempty"`
	// RedisRestarts: Redis may restart empty (the lease is lost), being
	// unreachable for RedisDowntime (default 1s).
	RedisRestarts bool          `json:"redis_restarts,omitempty"`
	RedisDowntime time.Duration `json:"redis_downtime,omitempty"`
}

func (e Envelope) withDefaults() Envelope {
	if e.RedisRestarts && e.RedisDowntime == 0 {
		e.RedisDowntime = time.Second
	}
	if e.LatencyMax < e.LatencyP99 {
		e.LatencyMax = e.LatencyP99
	}
	return e
}

// Check reports what is wrong with the constraints and the envelope.
func (c Constraints) check(e Envelope) error {
	var probs []string
	if c.MaxGap <= 0 {
		probs = append(probs, "max gap: give a limit (a gap of at least TTL + Wait follows any leader crash)")
	}
	if c.MaxOverlap < 0 || c.MaxStale < 0 {
		probs = append(probs, "max overlap and max stale must not be negative")
	}
	for _, p := range e.Partitions {
		if !slices.Contains(model.PartitionModes, p) {
			probs = append(probs, fmt.Sprintf("partition %q; want one of %s", p, strings.Join(model.PartitionModes, ", ")))
		}
	}
	if e.MaxClockDrift < 0 || e.MaxClockDrift >= 0.99 {
		probs = append(probs, fmt.Sprintf("clock drift %v; want a fraction from 0 to 0.99 (0.01 = 1%% slow)", e.MaxClockDrift))
	}
	if e.LatencyP99 < 0 || e.LatencyMax < 0 || e.MaxPause < 0 || e.MaxSuspend < 0 || e.MaxRedisPause < 0 || e.RedisDowntime < 0 {
		probs = append(probs, "envelope durations must not be negative")
	}
	if len(probs) > 0 {
		return fmt.Errorf("advise: %s", strings.Join(probs, "; "))
	}
	return nil
}

// AdviseOptions configure Advise.
type AdviseOptions struct {
	// Seeds the confirming search (Explore) takes per failure mode;
	// default 4. Confirm false skips the confirmation (prediction only).
	Seeds   int
	Confirm bool
	// Budget is the confirming search's runs per failure mode, at the
	// recommended TTL; each neighbouring TTL gets a quarter of it. Default
	// 4,000.
	Budget int
	// TargetMargin is the relative headroom a recommendation aims for on
	// each non-zero limit; default 0.2 (20%).
	TargetMargin float64
	Workers      int
	// Virtual configures the backend of the confirmation (a lease-loss
	// mode's Redis downtime is the envelope's).
	Virtual virtual.Options
}

// Setting is one recommended value with why.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Why   string `json:"why"`
}

// Margin is how one constraint fares under the recommendation.
type Margin struct {
	Constraint string        `json:"constraint"`
	Limit      time.Duration `json:"limit"`
	Predicted  time.Duration `json:"predicted"`
	// Mode is the failure mode with the worst prediction.
	Mode string `json:"mode"`
	// Measured is the worst virtual measurement (over modes and the
	// schedules searched), -1 when not confirmed; MeasuredMode and Seed
	// locate it.
	Measured     time.Duration `json:"measured"`
	MeasuredMode string        `json:"measured_mode,omitempty"`
	Seed         int64         `json:"seed,omitempty"`
	// Headroom is Limit - Predicted (NoLimit for no limit).
	Headroom time.Duration `json:"headroom"`
}

// ModeCheck is one failure mode of the envelope: the prediction for the
// recommended parameters and the virtual measurement beside it.
type ModeCheck struct {
	Mode       string            `json:"mode"`
	Prediction bounds.Prediction `json:"prediction"`
	// Measured: the worst the search found (nil: not confirmed or not
	// modelled).
	Measured *Measured `json:"measured,omitempty"`
	// Neighbours: the same mode measured at the neighbouring TTLs.
	Neighbours []Neighbour `json:"neighbours,omitempty"`
}

// Measured is the worst virtual measurement of a mode.
type Measured struct {
	Runs        int           `json:"runs"`
	MaxGap      time.Duration `json:"max_gap"`
	GapSeed     int64         `json:"gap_seed"`
	MaxOverlap  time.Duration `json:"max_overlap"`
	OverlapSeed int64         `json:"overlap_seed"`
	MaxStale    time.Duration `json:"max_stale"`
	// DuplicateChores is the most duplicate chores a runner-mode search
	// of the mode found (with Constraints.MaxDuplicateChores), and
	// DuplicateSeed its seed; ChoreRuns how many runs it made (0: none).
	DuplicateChores int   `json:"duplicate_chores,omitempty"`
	DuplicateSeed   int64 `json:"duplicate_seed,omitempty"`
	ChoreRuns       int   `json:"chore_runs,omitempty"`
	// Exceeds lists the predictions this measurement exceeded: a model
	// error to report, not a tolerance to widen, and a failed
	// confirmation.
	Exceeds []string `json:"exceeds,omitempty"`
}

// RealCheck is a confirming scenario run on the real backend, beside the
// virtual figures of the same schedule and seed.
type RealCheck struct {
	Scenario string `json:"scenario"`
	// Verdict is the real run's against the constraints ("" if it did not
	// run; Error says why).
	Verdict string        `json:"verdict,omitempty"`
	Error   string        `json:"error,omitempty"`
	Gap     time.Duration `json:"gap"`
	Overlap time.Duration `json:"overlap"`
	Stale   time.Duration `json:"stale"`
	// Virtual* are the virtual backend's figures for the same file.
	VirtualGap     time.Duration `json:"virtual_gap"`
	VirtualOverlap time.Duration `json:"virtual_overlap"`
	VirtualStale   time.Duration `json:"virtual_stale"`
	// Runner says the scenario runs the runner (runner mode): then its
	// chores are counted on both backends too.
	Runner bool `json:"runner,omitempty"`
	// DuplicateChores and StaleChores are the real run's counts,
	// Virtual* the virtual backend's (runner mode only).
	DuplicateChores        int `json:"duplicate_chores,omitempty"`
	StaleChores            int `json:"stale_chores,omitempty"`
	VirtualDuplicateChores int `json:"virtual_duplicate_chores,omitempty"`
	VirtualStaleChores     int `json:"virtual_stale_chores,omitempty"`
}

// Neighbour is a mode measured at another TTL (the other timings fixed).
type Neighbour struct {
	TTL        time.Duration `json:"ttl"`
	MaxGap     time.Duration `json:"max_gap"`
	MaxOverlap time.Duration `json:"max_overlap"`
	Meets      bool          `json:"meets"`
}

// Break is what happens past one edge of the envelope.
type Break struct {
	Dimension string `json:"dimension"`
	Envelope  string `json:"envelope"`
	// Threshold is the largest value (smallest clock rate) the
	// recommendation still survives; "" when it survives every value tried.
	Threshold string `json:"threshold"`
	// Ratio is Threshold / Envelope (0 when the envelope is 0).
	Ratio  float64 `json:"ratio,omitempty"`
	Breaks string  `json:"breaks"`
}

// Relax is one way out of an infeasible set of constraints.
type Relax struct {
	Constraint string        `json:"constraint"`
	From       time.Duration `json:"from"`
	To         time.Duration `json:"to"`
	// Params are the timings that meet the relaxed set.
	Params model.Params `json:"params"`
	Note   string       `json:"note,omitempty"`
	// Count says the constraint is a count (max duplicate chores): its
	// limits are FromCount and ToCount, and From and To are 0.
	Count     bool `json:"count,omitempty"`
	FromCount int  `json:"from_count,omitempty"`
	ToCount   int  `json:"to_count,omitempty"`
}

// ChoreMargin is the recommendation's duplicate chores per failover: the
// bound over the envelope's modes and the mode that gives it, and the
// most a runner-mode search of every mode found (-1: not confirmed).
type ChoreMargin struct {
	Limit        int    `json:"limit"`
	Predicted    int    `json:"predicted"`
	Mode         string `json:"mode"`
	Measured     int    `json:"measured"`
	MeasuredMode string `json:"measured_mode,omitempty"`
	Seed         int64  `json:"seed,omitempty"`
}

// Advice is Advise's answer.
type Advice struct {
	Constraints Constraints `json:"constraints"`
	Envelope    Envelope    `json:"envelope"`
	Feasible    bool        `json:"feasible"`
	// Params are the recommended timings (also the closest miss when not
	// feasible); Settings explain them.
	Params   model.Params `json:"params"`
	Settings []Setting    `json:"settings"`
	Margins  []Margin     `json:"margins"`
	// Chores is the duplicate-chores constraint's figure, with
	// Constraints.MaxDuplicateChores; nil without it.
	Chores *ChoreMargin `json:"chores,omitempty"`
	Modes  []ModeCheck  `json:"modes"`
	Breaks []Break      `json:"breaks,omitempty"`
	// BreaksFirst names the envelope edge with the least headroom.
	BreaksFirst string  `json:"breaks_first,omitempty"`
	Relax       []Relax `json:"relax,omitempty"`
	// Searched and FeasibleCount count the analytic candidates.
	Searched      int  `json:"searched"`
	FeasibleCount int  `json:"feasible_count"`
	Confirmed     bool `json:"confirmed"`
	// ConfirmedOK: every virtual measurement of the recommendation keeps
	// the constraints.
	ConfirmedOK bool `json:"confirmed_ok"`
	// Scenarios are the confirming scenarios, one per modelled mode: the
	// worst schedule the search found (against the constraint it came
	// closest to breaking) with its seed, and the constraints as its
	// expectations, for CI to keep checking on the real backend.
	Scenarios []model.Scenario `json:"scenarios,omitempty"`
	// Real are the confirming scenarios run on the real backend (chaos
	// advise --confirm-real), beside the virtual figures.
	Real []RealCheck `json:"real,omitempty"`
	// Notes are caveats.
	Notes []string `json:"notes,omitempty"`
}

// The candidate space of the analytic search.
var (
	candTTL  = []time.Duration{time.Second, 1500 * time.Millisecond, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second, 6 * time.Second, 8 * time.Second, 10 * time.Second, 12 * time.Second, 15 * time.Second, 20 * time.Second, 30 * time.Second, 45 * time.Second, 60 * time.Second}
	candWait = []float64{0.25, 0.5, 1, 1.2} // × TTL (the spec: 6s for 5s)
	candRead = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second}
	candRetr = []int{-1, 1, 3}
	candOp   = []float64{0, 0.25} // × TTL; 0 = none
)

// candidate is one parameter set and its predicted worst cases.
type candidate struct {
	p                    model.Params
	gap, overlap, stale  time.Duration
	gapMode, overMode    string
	writesOK             bool
	feasible, robust     bool
	minRel               float64
	preds                []bounds.Prediction
	excessG, excessO, eS time.Duration
	// dup is the most duplicate chores per failover over the modes
	// (bounds.ChoreBoundFor), dupMode the mode; math.MaxInt when a mode has
	// no bound.
	dup     int
	dupMode string
}

// envelopeModes are the failure modes the envelope asks to survive, and
// their fault sizes (P is the longest pause; modeSize gives the suspend
// mode its own).
func envelopeModes(e Envelope) ([]string, model.FaultSize) {
	modes := []string{model.ModeLeaderCrash, model.ModeGracefulStop, model.ModeRenewError}
	for _, p := range e.Partitions {
		m := model.PartitionFailureMode(p)
		if !slices.Contains(modes, m) {
			modes = append(modes, m)
		}
	}
	size := model.FaultSize{}
	if e.LatencyMax > 0 {
		modes = append(modes, model.ModeLatency)
		size.Latency = e.LatencyMax
	}
	if e.MaxPause > 0 {
		modes = append(modes, model.ModePause)
		size.Pause = e.MaxPause
	}
	if e.MaxSuspend > 0 {
		modes = append(modes, model.ModeSuspend)
	}
	if e.MaxRedisPause > 0 {
		modes = append(modes, model.ModeRedisPause)
		size.RedisPause = e.MaxRedisPause
	}
	if e.MaxClockDrift > 0 {
		modes = append(modes, model.ModeClockDrift)
		size.ClockRate = 1 - e.MaxClockDrift
	}
	if e.RedisRestarts {
		modes = append(modes, model.ModeLeaseLoss)
		size.RedisDowntime = e.RedisDowntime
	}
	if slices.Contains(e.Partitions, model.PartitionBlackholeReplies) {
		size.ReplyPartition = model.Unbounded
	}
	return modes, size
}

// modeSize is the fault size mode is predicted and confirmed with: s, but
// for the suspend mode P is the envelope's longest suspend (a pause and a
// suspend share FaultSize.Pause, and an envelope may give both).
func modeSize(mode string, s model.FaultSize, e Envelope) model.FaultSize {
	if mode == model.ModeSuspend {
		s.Pause = e.MaxSuspend
	}
	return s
}

// minReadTimeout: healthy calls must not time out: 3 × the p99 round trip,
// at least 100ms.
func minReadTimeout(e Envelope) time.Duration {
	return max(100*time.Millisecond, 6*e.LatencyP99)
}

// evaluate predicts a candidate under the envelope.
func evaluate(p model.Params, c Constraints, e Envelope, target float64) candidate {
	modes, size := envelopeModes(e)
	cd := candidate{p: p}
	for _, m := range modes {
		pr, _ := bounds.PredictMode(p, m, modeSize(m, size, e))
		cd.preds = append(cd.preds, pr)
		if pr.MaxGap > cd.gap || cd.gapMode == "" {
			cd.gap, cd.gapMode = max(cd.gap, pr.MaxGap), m
		}
		if pr.MaxOverlap > cd.overlap || cd.overMode == "" {
			cd.overlap, cd.overMode = max(cd.overlap, pr.MaxOverlap), m
		}
	}
	// Stale leadership: a leader believing past its key's expiry. Each
	// overlap bound is exactly that (it assumes a follower takes the key at
	// expiry), so it bounds stale leadership too.
	cd.stale = cd.overlap
	cd.writesOK = !c.NoStaleWrites || p.Safe || cd.stale == 0
	excess := func(v, lim time.Duration) time.Duration { return max(0, v-lim) }
	cd.excessG, cd.excessO, cd.eS = excess(cd.gap, c.MaxGap), excess(cd.overlap, c.MaxOverlap), excess(cd.stale, c.MaxStale)
	cd.feasible = cd.excessG == 0 && cd.excessO == 0 && cd.eS == 0 && cd.writesOK
	if c.MaxDuplicateChores != nil {
		cd.dup, cd.dupMode = choreBound(p, modes, cd.preds)
		cd.feasible = cd.feasible && cd.dup <= *c.MaxDuplicateChores
	}
	cd.minRel = 1
	for _, x := range []struct{ v, lim time.Duration }{{cd.gap, c.MaxGap}, {cd.overlap, c.MaxOverlap}, {cd.stale, c.MaxStale}} {
		if x.lim > 0 && x.lim != NoLimit {
			cd.minRel = min(cd.minRel, float64(x.lim-x.v)/float64(x.lim))
		}
	}
	cd.robust = cd.feasible && cd.minRel >= target-1e-9
	return cd
}

// choreBound is the most duplicate chores per failover over the modes
// predictions (bounds.ChoreBoundFor) and its mode; clock drift, which has
// no chore bound, is left out, and a mode whose overlap is unbounded
// gives math.MaxInt.
func choreBound(p model.Params, modes []string, preds []bounds.Prediction) (int, string) {
	interval := p.ChoreInterval
	if interval <= 0 {
		interval = model.DefaultChoreInterval
	}
	n, at := 0, ""
	for i, m := range modes {
		if m == model.ModeClockDrift || i >= len(preds) {
			continue
		}
		v, _, ok := bounds.ChoreBoundFor(preds[i].MaxOverlap, interval, m == model.ModePause || m == model.ModeSuspend)
		if !ok {
			v = math.MaxInt
		}
		if v > n || at == "" {
			n, at = max(n, v), m
		}
	}
	return n, at
}

// candidates enumerates the search space, in a fixed order.
func candidates(e Envelope) []model.Params {
	var out []model.Params
	floor := minReadTimeout(e)
	for _, ttl := range candTTL {
		for _, wf := range candWait {
			for _, rt := range candRead {
				if rt < floor {
					continue
				}
				for _, mr := range candRetr {
					for _, of := range candOp {
						for _, safe := range []bool{false, true} {
							p := model.Params{TTL: ttl, Wait: time.Duration(float64(ttl) * wf), JitterMS: model.DefaultJitterMS,
								OpTimeout: time.Duration(float64(ttl) * of), Safe: safe,
								Client: model.ClientParams{ReadTimeout: rt, WriteTimeout: rt, DialTimeout: rt, MaxRetries: mr}}
							out = append(out, p)
						}
					}
				}
			}
		}
	}
	return out
}

// better ranks feasible candidates: robust (≥ the target margin on every
// limit) first, then the longest TTL (fewest Redis writes, most tolerance
// beyond the envelope), then the most headroom, then the longest read
// timeout (fewest spurious timeouts), more retries, no op timeout, and safe
// mode when no overlap or no stale write is allowed (defence in depth
// beyond the envelope), spec mode otherwise.
func better(a, b candidate, preferSafe bool) bool {
	if a.robust != b.robust {
		return a.robust
	}
	if a.p.TTL != b.p.TTL {
		return a.p.TTL > b.p.TTL
	}
	if a.minRel != b.minRel {
		return a.minRel > b.minRel
	}
	if a.p.Client.ReadTimeout != b.p.Client.ReadTimeout {
		return a.p.Client.ReadTimeout > b.p.Client.ReadTimeout
	}
	if a.p.Client.MaxRetries != b.p.Client.MaxRetries {
		return a.p.Client.MaxRetries > b.p.Client.MaxRetries
	}
	if a.p.OpTimeout != b.p.OpTimeout {
		return a.p.OpTimeout < b.p.OpTimeout
	}
	if a.p.Safe != b.p.Safe {
		return a.p.Safe == preferSafe
	}
	return false
}

// Advise finds timings that meet the constraints under the envelope: an
// analytic search over the candidate space with bounds.PredictMode, then
// (o.Confirm) a search of the worst schedule (Explore) of every modelled
// mode of the envelope, with the recommendation and its TTL neighbours.
// If nothing meets the constraints, Advice.Relax says which constraint to
// relax, and to what.
func Advise(ctx context.Context, c Constraints, e Envelope, o AdviseOptions) (Advice, error) {
	e = e.withDefaults()
	if err := c.check(e); err != nil {
		return Advice{}, err
	}
	if o.TargetMargin == 0 {
		o.TargetMargin = 0.2
	}
	if o.Seeds == 0 {
		o.Seeds = 4
	}
	if o.Budget == 0 {
		o.Budget = 4000
	}
	preferSafe := c.MaxOverlap == 0 || c.NoStaleWrites
	a := Advice{Constraints: c, Envelope: e}
	var all []candidate
	var best *candidate
	for _, p := range candidates(e) {
		cd := evaluate(p, c, e, o.TargetMargin)
		all = append(all, cd)
		if cd.feasible {
			a.FeasibleCount++
			if best == nil || better(cd, *best, preferSafe) {
				x := cd
				best = &x
			}
		}
	}
	a.Searched = len(all)
	if best == nil {
		a.Relax = relaxations(all, c)
		a.Relax = append(a.Relax, envelopeRelax(c, e, o.TargetMargin)...)
		// The closest miss: the candidate with the least total relative excess.
		var near *candidate
		score := func(cd candidate) float64 {
			rel := func(x, lim time.Duration) float64 { return float64(x) / float64(max(lim, 100*time.Millisecond)) }
			s := rel(cd.excessG, c.MaxGap) + rel(cd.excessO, c.MaxOverlap) + rel(cd.eS, c.MaxStale)
			if !cd.writesOK {
				s += 1
			}
			return s
		}
		for i := range all {
			if near == nil || score(all[i]) < score(*near) {
				near = &all[i]
			}
		}
		best = near
	} else {
		a.Feasible = true
	}
	a.Params = best.p
	a.Settings = settings(*best, e, o.TargetMargin)
	a.Margins = margins(*best, c)
	if l := c.MaxDuplicateChores; l != nil {
		a.Chores = &ChoreMargin{Limit: *l, Predicted: best.dup, Mode: best.dupMode, Measured: -1}
	}
	for _, pr := range best.preds {
		a.Modes = append(a.Modes, ModeCheck{Mode: pr.Mode, Prediction: pr})
	}
	if a.Feasible {
		a.Breaks, a.BreaksFirst = breaks(best.p, c, e)
	}
	a.Notes = append(a.Notes,
		fmt.Sprintf("Searched %d candidates (TTL 1s-60s; Wait 0.25-1.2 × TTL; read timeout ≥ %v, 3 × the p99 round trip; max retries none, 1, 3; op timeout none or TTL/4; spec and safe mode); %d meet the constraints analytically.", a.Searched, minReadTimeout(e), a.FeasibleCount),
		"Stale leadership is predicted by the overlap bounds (each is how long a leader can believe past its key's expiry).",
		"Write and dial timeouts are set to the read timeout; ContextTimeoutEnabled stays off (go-redis's default), so an op timeout caps only refused and reset calls.")
	if o.Confirm {
		if err := confirm(ctx, &a, *best, e, o); err != nil {
			return a, err
		}
	}
	return a, nil
}

func dur(d time.Duration) string {
	switch {
	case d == NoLimit:
		return "none"
	case d == 0:
		return "0s"
	}
	return d.String()
}

// settings are the recommendation's values, each with why it is what it
// is, in words that hold by the candidate's own numbers (a test checks
// each against the model): the TTL's says which ranking chose it and what
// it predicts, and a closest miss says it misses.
func settings(cd candidate, e Envelope, target float64) []Setting {
	p := cd.p
	retries := "none (max_retries: 0 in a scenario file, -1 in go-redis)"
	if p.Client.MaxRetries > 0 {
		retries = fmt.Sprint(p.Client.MaxRetries)
	}
	op := "none"
	if p.OpTimeout > 0 {
		op = p.OpTimeout.String()
	}
	predicted := fmt.Sprintf("its worst gap %s (%s), overlap %s and stale leadership %s (%s)",
		model.DurationText(cd.gap), cd.gapMode, model.DurationText(cd.overlap), model.DurationText(cd.stale), cd.overMode)
	var ttlWhy string
	switch {
	case cd.robust:
		ttlWhy = fmt.Sprintf("the longest TTL that keeps %.0f%% headroom on every limit set above 0: %s; a longer TTL means fewer renewals and more tolerance of pauses and latency", target*100, predicted)
	case cd.feasible:
		ttlWhy = fmt.Sprintf("no setting keeps %.0f%% headroom on every limit set above 0; the longest TTL that meets them all: %s", target*100, predicted)
	default:
		ttlWhy = "closest miss (no setting meets every limit; the least total excess over them): " + predicted
	}
	mode, modeWhy := "spec", "spec mode meets the constraints; it is the elector's default"
	if !cd.feasible {
		modeWhy = "spec mode in the closest miss; it is the elector's default"
	}
	if p.Safe {
		mode = "safe"
		modeWhy = "the lease guard demotes a leader whose calls hang before its key can expire, and the fence refuses a stale leader's writes"
	}
	readWhy := fmt.Sprintf("at least %v (3 × the p99 round trip of %v, and never below 100ms) so healthy calls do not time out", minReadTimeout(e), 2*e.LatencyP99)
	if e.LatencyP99 == 0 {
		readWhy = "at least 100ms (no p99 latency given: --latency-p99) so healthy calls do not time out"
	}
	return []Setting{
		{"ttl", p.TTL.String(), ttlWhy},
		{"wait", p.Wait.String(), fmt.Sprintf("%.2g × TTL: followers retry within Wait of expiry, so it adds directly to every gap", float64(p.Wait)/float64(p.TTL))},
		{"jitter", fmt.Sprintf("%dms", p.JitterMS), "the spec's; it only delays renewals (it enters the overlap bounds)"},
		{"read_timeout", p.Client.ReadTimeout.String(), readWhy + "; " + hungRenewal(p)},
		{"write_timeout, dial_timeout", p.Client.ReadTimeout.String(), "the same as the read timeout"},
		{"max_retries", retries, "the go-redis retries a failing call makes: each can cost another timeout"},
		{"op_timeout", op, "the elector's per-call deadline"},
		{"mode", mode, modeWhy},
	}
}

// hungRenewal says how long a renewal that hangs (a blackholed call: every
// attempt times out, bounds.CallBound) takes against the TTL, by the
// model's own numbers: whether it ends while the lease still holds.
func hungRenewal(p model.Params) string {
	hang := bounds.CallBound(p, model.ModePartitionBlackhole)
	switch {
	case hang == model.Unbounded:
		return "a hung renewal never ends on its own (no timeout): the leader learns of a lost lease only from another call"
	case hang < p.TTL:
		return fmt.Sprintf("a hung renewal gives up after %v (its attempts, retries and backoffs), within the TTL (%v)", hang, p.TTL)
	case p.Safe:
		return fmt.Sprintf("a hung renewal can take %v (its attempts, retries and backoffs), longer than the TTL (%v): safe mode's guard demotes the leader at its lease's end while the call still hangs", hang, p.TTL)
	}
	return fmt.Sprintf("a hung renewal can take %v (its attempts, retries and backoffs), longer than the TTL (%v): the leader believes past its lease until the call ends, which the overlap and stale bounds above count", hang, p.TTL)
}

func margins(cd candidate, c Constraints) []Margin {
	m := func(name string, lim, v time.Duration, mode string) Margin {
		h := NoLimit
		if lim != NoLimit {
			h = lim - v
		}
		return Margin{Constraint: name, Limit: lim, Predicted: v, Mode: mode, Measured: -1, Headroom: h}
	}
	return []Margin{
		m("max gap", c.MaxGap, cd.gap, cd.gapMode),
		m("max overlap", c.MaxOverlap, cd.overlap, cd.overMode),
		m("max stale leadership", c.MaxStale, cd.stale, cd.overMode),
	}
}

// relaxations: for each constraint, the least it must be relaxed, alone,
// for some candidate to meet the set.
func relaxations(all []candidate, c Constraints) []Relax {
	var out []Relax
	type probe struct {
		name  string
		lim   time.Duration
		val   func(candidate) time.Duration
		other func(candidate) bool
	}
	// choresOK: the duplicate-chore constraint, which relaxing another
	// leaves in force.
	choresOK := func(x candidate) bool { return c.MaxDuplicateChores == nil || x.dup <= *c.MaxDuplicateChores }
	for _, pb := range []probe{
		{"max gap", c.MaxGap, func(x candidate) time.Duration { return x.gap }, func(x candidate) bool { return x.excessO == 0 && x.eS == 0 && x.writesOK && choresOK(x) }},
		{"max overlap", c.MaxOverlap, func(x candidate) time.Duration { return x.overlap }, func(x candidate) bool { return x.excessG == 0 && x.eS == 0 && x.writesOK && choresOK(x) }},
		{"max stale leadership", c.MaxStale, func(x candidate) time.Duration { return x.stale }, func(x candidate) bool { return x.excessG == 0 && x.excessO == 0 && x.writesOK && choresOK(x) }},
	} {
		var best *candidate
		for i := range all {
			if all[i].feasible || !pb.other(all[i]) || pb.val(all[i]) <= pb.lim {
				continue
			}
			if best == nil || pb.val(all[i]) < pb.val(*best) {
				best = &all[i]
			}
		}
		if best == nil {
			out = append(out, Relax{Constraint: pb.name, From: pb.lim, To: -1, Note: "relaxing it alone is not enough"})
			continue
		}
		out = append(out, Relax{Constraint: pb.name, From: pb.lim, To: pb.val(*best), Params: best.p,
			Note: fmt.Sprintf("by %v; worst case %s", pb.val(*best)-pb.lim, modeFor(*best, pb.name))})
	}
	if l := c.MaxDuplicateChores; l != nil {
		var best *candidate
		for i := range all {
			x := &all[i]
			if x.feasible || x.dup <= *l || x.excessG != 0 || x.excessO != 0 || x.eS != 0 || !x.writesOK {
				continue
			}
			if best == nil || x.dup < best.dup {
				best = x
			}
		}
		if best == nil {
			out = append(out, Relax{Constraint: "max duplicate chores", Count: true, FromCount: *l, To: -1, Note: "relaxing it alone is not enough"})
		} else {
			out = append(out, Relax{Constraint: "max duplicate chores", Count: true, FromCount: *l, ToCount: best.dup, Params: best.p,
				Note: fmt.Sprintf("by %d per failover; worst case %s", best.dup-*l, best.dupMode)})
		}
	}
	// Cheapest first: the smallest relative relaxation.
	slices.SortStableFunc(out, func(x, y Relax) int {
		rx, ry := relCost(x), relCost(y)
		switch {
		case rx < ry:
			return -1
		case rx > ry:
			return 1
		}
		return 0
	})
	return out
}

func relCost(r Relax) float64 {
	switch {
	case r.To < 0:
		return 1e18
	case r.Count:
		return float64(r.ToCount-r.FromCount) / float64(max(r.FromCount, 1))
	}
	return float64(r.To-r.From) / float64(max(r.From, time.Second))
}

func modeFor(cd candidate, constraint string) string {
	if constraint == "max gap" {
		return cd.gapMode
	}
	return cd.overMode
}

// anyFeasible reports whether some candidate meets c under e.
func anyFeasible(c Constraints, e Envelope) (model.Params, bool) {
	for _, p := range candidates(e) {
		if ok, _ := meets(p, c, e); ok {
			return p, true
		}
	}
	return model.Params{}, false
}

// envelopeRelax: the other way out, a smaller envelope. For each edge that
// can shrink, the largest value for which some candidate meets the
// constraints (to the millisecond, or 0.1% of drift).
func envelopeRelax(c Constraints, e Envelope, target float64) []Relax {
	var out []Relax
	try := func(name string, from time.Duration, set func(*Envelope, time.Duration)) {
		x := e
		set(&x, 0)
		p0, ok := anyFeasible(c, x)
		if !ok {
			return // shrinking this edge alone does not help
		}
		lo, hi := time.Duration(0), from // lo feasible, hi not
		for hi-lo > time.Millisecond {
			mid := (lo + hi) / 2
			x := e
			set(&x, mid)
			if p, ok := anyFeasible(c, x); ok {
				lo, p0 = mid, p
			} else {
				hi = mid
			}
		}
		note := fmt.Sprintf("the platform must keep %s within %v", name, lo)
		if lo == 0 {
			note = "the platform must rule out " + name + " altogether"
		}
		out = append(out, Relax{Constraint: "envelope: " + name, From: from, To: lo, Params: p0, Note: note})
	}
	if e.RedisRestarts {
		x := e
		x.RedisRestarts = false
		if p, ok := anyFeasible(c, x); ok {
			out = append(out, Relax{Constraint: "envelope: Redis restarts", From: e.RedisDowntime, To: 0, Params: p,
				Note: "a restart loses the key behind the leader's back: its overlap, TTL/2 + jitter, does not depend on the timings' client side; make Redis persistent or replicated instead"})
		}
	}
	if e.MaxPause > 0 {
		try("pauses", e.MaxPause, func(x *Envelope, v time.Duration) { x.MaxPause = v })
	}
	if e.MaxSuspend > 0 {
		try("suspends", e.MaxSuspend, func(x *Envelope, v time.Duration) { x.MaxSuspend = v })
	}
	if e.MaxRedisPause > 0 {
		try("Redis pauses", e.MaxRedisPause, func(x *Envelope, v time.Duration) { x.MaxRedisPause = v })
	}
	if e.LatencyMax > 0 {
		try("latency spikes", e.LatencyMax, func(x *Envelope, v time.Duration) { x.LatencyMax = max(v, x.LatencyP99) })
	}
	return out
}

// meets: the params keep the constraints under the envelope.
func meets(p model.Params, c Constraints, e Envelope) (bool, string) {
	cd := evaluate(p, c, e, 0)
	switch {
	case cd.excessO > 0:
		return false, fmt.Sprintf("max overlap (%s: %s)", cd.overMode, bounds.BoundText(cd.overlap))
	case cd.eS > 0:
		return false, fmt.Sprintf("max stale leadership (%s: %s)", cd.overMode, bounds.BoundText(cd.stale))
	case cd.excessG > 0:
		return false, fmt.Sprintf("max gap (%s: %s)", cd.gapMode, bounds.BoundText(cd.gap))
	case !cd.writesOK:
		return false, "no stale writes"
	case c.MaxDuplicateChores != nil && cd.dup > *c.MaxDuplicateChores:
		return false, fmt.Sprintf("max duplicate chores (%s: %d per failover)", cd.dupMode, cd.dup)
	}
	return true, ""
}

// breaks scans each edge of the envelope past its value for the first
// value that breaks a constraint.
func breaks(p model.Params, c Constraints, e Envelope) ([]Break, string) {
	var out []Break
	scan := func(dim, env string, envV float64, values []float64, set func(*Envelope, float64), show func(float64) string) {
		last := ""
		lastV := envV
		for _, v := range values {
			x := e
			set(&x, v)
			if ok, why := meets(p, c, x); !ok {
				b := Break{Dimension: dim, Envelope: env, Threshold: last, Breaks: why}
				if last == "" {
					b.Threshold = "(breaks at the first step)"
				}
				if envV > 0 {
					b.Ratio = lastV / envV
				}
				out = append(out, b)
				return
			}
			last, lastV = show(v), v
		}
		out = append(out, Break{Dimension: dim, Envelope: env, Threshold: "", Breaks: "nothing up to " + last})
	}
	ms := func(v float64) string { return time.Duration(v).Round(time.Millisecond).String() }
	steps := func(from, to, step float64) []float64 {
		var vs []float64
		for v := from; v <= to; v += step {
			vs = append(vs, v)
		}
		return vs
	}
	ttl := float64(p.TTL)
	scan("pause", dur(e.MaxPause), float64(e.MaxPause), steps(float64(e.MaxPause)+float64(5*time.Millisecond), 4*ttl, float64(5*time.Millisecond)),
		func(x *Envelope, v float64) { x.MaxPause = time.Duration(v) }, ms)
	if e.MaxSuspend > 0 { // only where the envelope has one: it breaks where a pause does
		scan("suspend", dur(e.MaxSuspend), float64(e.MaxSuspend), steps(float64(e.MaxSuspend)+float64(5*time.Millisecond), 4*ttl, float64(5*time.Millisecond)),
			func(x *Envelope, v float64) { x.MaxSuspend = time.Duration(v) }, ms)
	}
	if e.MaxRedisPause > 0 { // only where the envelope has one
		scan("redis pause", dur(e.MaxRedisPause), float64(e.MaxRedisPause), steps(float64(e.MaxRedisPause)+float64(5*time.Millisecond), 4*ttl, float64(5*time.Millisecond)),
			func(x *Envelope, v float64) { x.MaxRedisPause = time.Duration(v) }, ms)
	}
	scan("latency (one way, max)", dur(e.LatencyMax), float64(e.LatencyMax), steps(float64(e.LatencyMax)+float64(time.Millisecond), 2*ttl, float64(time.Millisecond)),
		func(x *Envelope, v float64) { x.LatencyMax = time.Duration(v) }, ms)
	scan("clock drift (slow)", fmt.Sprintf("%.3g%%", 100*e.MaxClockDrift), e.MaxClockDrift, steps(e.MaxClockDrift+0.001, 0.98, 0.001),
		func(x *Envelope, v float64) { x.MaxClockDrift = v }, func(v float64) string { return fmt.Sprintf("%.3g%%", 100*v) })
	dt := e.RedisDowntime
	if !e.RedisRestarts {
		dt = 0
	}
	scan("redis restart downtime", dur(dt), float64(dt), steps(float64(dt)+float64(10*time.Millisecond), 4*ttl+float64(c.MaxGap), float64(10*time.Millisecond)),
		func(x *Envelope, v float64) { x.RedisRestarts, x.RedisDowntime = true, time.Duration(v) }, ms)
	for _, pm := range model.PartitionModes {
		if slices.Contains(e.Partitions, pm) {
			continue
		}
		x := e
		x.Partitions = append(slices.Clone(e.Partitions), pm)
		ok, why := meets(p, c, x)
		if !ok {
			out = append(out, Break{Dimension: "partition " + pm, Envelope: "not in the envelope", Threshold: "not survived", Breaks: why})
		} else {
			out = append(out, Break{Dimension: "partition " + pm, Envelope: "not in the envelope", Threshold: "", Breaks: "nothing: survived too"})
		}
	}
	first := ""
	bestR := 0.0
	for _, b := range out {
		if b.Ratio > 0 && (first == "" || b.Ratio < bestR) {
			first, bestR = b.Dimension, b.Ratio
		}
	}
	if first == "" {
		for _, b := range out {
			if b.Threshold != "" {
				first = b.Dimension
				break
			}
		}
	}
	return out, first
}

// confirmScenario builds the scenario that exercises one mode of the
// envelope with the recommended timings.
func confirmScenario(mode string, p model.Params, e Envelope) (model.Scenario, bool) {
	return ModeScenario(mode, p, modeSize(mode, model.FaultSize{Latency: e.LatencyMax, Pause: e.MaxPause, ClockRate: 1 - e.MaxClockDrift, RedisPause: e.MaxRedisPause}, e))
}

// ModeScenario builds a scenario that exercises one failure mode with the
// timings p and the fault size s (latency, pause or suspend, clock rate,
// Redis pause): three bare electors, the fault on the leader a TTL in,
// lasting long enough for the mode's worst case. The fault is its kind's
// (model.KindSpec.ModeFault). false: the mode has no fault to inject
// (renew-error, graceful-stop, failover: each kind's NoModeFault says why)
// or its size is not given.
func ModeScenario(mode string, p model.Params, s model.FaultSize) (model.Scenario, bool) {
	call := bounds.CallBound(p, model.ModePartitionBlackhole)
	if call == model.Unbounded {
		call = 2 * p.TTL
	}
	long := 2*p.TTL + p.Wait + call
	f, ok := modeFault(mode, p, s, long)
	if !ok {
		return model.Scenario{}, false
	}
	f.At = p.TTL
	if !f.Kind.OnRedis() {
		f.Target = model.Target{Role: model.RoleLeader}
	}
	sc := model.Scenario{Name: "advise-" + mode, Instances: 3, Mode: model.ModeElector, Params: p, Faults: []model.Fault{f}}
	sc.Description = fmt.Sprintf("chaos advise: %s with TTL %v, Wait %v, read timeout %v, max retries %d, op timeout %v, safe %v", mode, p.TTL, p.Wait, p.Client.ReadTimeout, p.Client.MaxRetries, p.OpTimeout, p.Safe)
	sc.Duration = p.TTL + max(p.TTL/2, p.Wait) + f.For + p.TTL
	return sc, true
}

// modeFault is the fault of the kind whose failure modes include mode,
// sized by s; false: no kind injects it, or s gives it no size.
func modeFault(mode string, p model.Params, s model.FaultSize, long time.Duration) (model.Fault, bool) {
	for _, k := range model.Kinds() {
		if k.ModeFault != nil && slices.Contains(k.Modes, mode) {
			return k.ModeFault(mode, p, s, long)
		}
	}
	return model.Fault{}, false
}

// ModeWorst is the worst case a search found for one failure mode, beside
// its prediction (chaos bounds --explore).
type ModeWorst struct {
	Mode string `json:"mode"`
	// Gap and Overlap are the search's worst max gap and max overlap, with
	// their bounds and ratios; Runs how many runs it made.
	Gap     Worst `json:"gap"`
	Overlap Worst `json:"overlap"`
	Runs    int   `json:"runs"`
}

// ExploreModes searches, for each failure mode that has a fault to inject
// (ModeScenario), the worst gap and overlap with the timings p and fault
// size s, budget runs per mode.
func ExploreModes(ctx context.Context, p model.Params, s model.FaultSize, budget int, o ExploreOptions) ([]ModeWorst, error) {
	var out []ModeWorst
	for _, mode := range bounds.Modes {
		sc, ok := ModeScenario(mode, p, s)
		if !ok {
			continue
		}
		sc.Name = "bounds-" + mode
		r, err := Explore(ctx, Space{Base: sc, Metrics: []string{exGap, exOverlap}, Seeds: 4, Budget: budget}, o)
		if err != nil {
			return out, fmt.Errorf("exploring %s: %w", mode, err)
		}
		out = append(out, ModeWorst{Mode: mode, Gap: r.Worst[0], Overlap: r.Worst[1], Runs: r.Runs})
	}
	return out, nil
}

// ConstraintExpect are the constraints as a scenario's expectations.
func ConstraintExpect(c Constraints) []model.Expectation {
	ex := []model.Expectation{{Metric: model.MetricMaxGap, Max: c.MaxGap.String()}, {Metric: model.MetricMaxOverlap, Max: c.MaxOverlap.String()}}
	if c.MaxStale != NoLimit {
		ex = append(ex, model.Expectation{Metric: model.MetricStaleLeadership, Max: c.MaxStale.String()})
	}
	return ex
}

// confirm searches the worst schedule of each modelled mode with the
// recommendation (Explore: fault starts aligned to the elector's calls,
// follower phases, seeds) and with its TTL neighbours, and fills the
// measurements. A measurement above its prediction is a model error: the
// confirmation fails.
func confirm(ctx context.Context, a *Advice, best candidate, e Envelope, o AdviseOptions) error {
	p := best.p
	i := slices.Index(candTTL, p.TTL)
	var neighbours []time.Duration
	if i > 0 {
		neighbours = append(neighbours, candTTL[i-1])
	}
	if i+1 < len(candTTL) {
		neighbours = append(neighbours, candTTL[i+1])
	}
	a.Confirmed, a.ConfirmedOK = true, true
	worst := map[string]*Margin{}
	for k := range a.Margins {
		worst[a.Margins[k].Constraint] = &a.Margins[k]
		a.Margins[k].Measured = 0
	}
	c := a.Constraints
	metrics := []string{exGap, exOverlap, exStale}
	limits := []time.Duration{c.MaxGap, c.MaxOverlap, c.MaxStale}
	for mi := range a.Modes {
		mc := &a.Modes[mi]
		sc, ok := confirmScenario(mc.Mode, p, e)
		if !ok {
			continue
		}
		o.Virtual.RedisDowntime = 0
		if mc.Mode == model.ModeLeaseLoss {
			o.Virtual.RedisDowntime = e.RedisDowntime
		}
		search := func(sc model.Scenario, budget int) (*ExploreResult, error) {
			s := Space{Base: sc, Metrics: metrics, Seeds: o.Seeds, Budget: budget}
			r, err := Explore(ctx, s, ExploreOptions{Workers: o.Workers, Virtual: o.Virtual})
			if err != nil {
				return nil, fmt.Errorf("confirming %s: %w", mc.Mode, err)
			}
			return r, nil
		}
		r, err := search(sc, o.Budget)
		if err != nil {
			return err
		}
		m := &Measured{Runs: r.Runs}
		ws := map[string]Worst{}
		for _, w := range r.Worst {
			ws[w.Metric] = w
			if w.Violated {
				measured, bound := w.Texts()
				m.Exceeds = append(m.Exceeds, fmt.Sprintf("%s %s > predicted %s (%s; seed %d)", w.Metric, measured, bound, w.Formula, w.Schedule.Seed))
			}
		}
		m.MaxGap, m.GapSeed = ws[exGap].Measured, ws[exGap].Schedule.Seed
		m.MaxOverlap, m.OverlapSeed = ws[exOverlap].Measured, ws[exOverlap].Schedule.Seed
		m.MaxStale = ws[exStale].Measured
		if len(m.Exceeds) > 0 {
			a.ConfirmedOK = false
		}
		mc.Measured = m
		if l := c.MaxDuplicateChores; l != nil {
			rsc := sc
			rsc.Mode, rsc.Expect = model.ModeRunner, nil
			rs := Space{Base: rsc, Metrics: []string{exDupChores}, Seeds: o.Seeds, Budget: max(o.Budget/4, 1)}
			rr, err := Explore(ctx, rs, ExploreOptions{Workers: o.Workers, Virtual: o.Virtual})
			if err != nil {
				return fmt.Errorf("confirming %s's duplicate chores: %w", mc.Mode, err)
			}
			w := rr.Worst[0]
			m.ChoreRuns, m.DuplicateChores, m.DuplicateSeed = rr.Runs, int(w.Measured), w.Schedule.Seed
			if w.Violated {
				m.Exceeds = append(m.Exceeds, fmt.Sprintf("duplicate_chores %s > predicted %s (%s; seed %d)", w.Value(w.Measured), w.BoundValue(), w.Formula, w.Schedule.Seed))
				a.ConfirmedOK = false
			}
			if m.DuplicateChores > *l {
				a.ConfirmedOK = false
			}
			if ch := a.Chores; ch != nil && (m.DuplicateChores > ch.Measured || ch.MeasuredMode == "") {
				ch.Measured, ch.MeasuredMode, ch.Seed = max(ch.Measured, m.DuplicateChores), mc.Mode, m.DuplicateSeed
			}
			// Keep the worst chore schedule too, in runner mode, so that
			// --confirm-real and CI count the chores on real.
			if w.Found {
				ksc, err := rr.Space.Scenario(w.Schedule)
				if err != nil {
					return fmt.Errorf("confirming %s's duplicate chores: %w", mc.Mode, err)
				}
				ksc.Name = sc.Name + "-chores"
				ksc.Description = fmt.Sprintf("%s In runner mode: the schedule with the most duplicate chores the search found (%d over %d runs), seed %d; the chores' constraint is the expectation.", sc.Description, m.DuplicateChores, rr.Runs, ksc.Seed)
				ksc.Expect = []model.Expectation{{Metric: model.MetricDuplicateChores, Max: strconv.Itoa(*l)}}
				a.Scenarios = append(a.Scenarios, ksc)
			}
		}
		for _, t := range neighbours {
			nsc := sc
			nsc.Params.TTL = t
			if nsc.Validate() != nil {
				continue
			}
			nr, err := search(nsc, max(o.Budget/4, 1))
			if err != nil {
				return err
			}
			n := Neighbour{TTL: t}
			for _, w := range nr.Worst {
				switch w.Metric {
				case exGap:
					n.MaxGap = w.Measured
				case exOverlap:
					n.MaxOverlap = w.Measured
				case exStale:
					n.Meets = w.Measured <= c.MaxStale
				}
			}
			n.Meets = n.Meets && n.MaxGap <= c.MaxGap && n.MaxOverlap <= c.MaxOverlap
			mc.Neighbours = append(mc.Neighbours, n)
		}
		for _, x := range []struct {
			name string
			v    time.Duration
			seed int64
		}{{"max gap", m.MaxGap, m.GapSeed}, {"max overlap", m.MaxOverlap, m.OverlapSeed}, {"max stale leadership", m.MaxStale, ws[exStale].Schedule.Seed}} {
			w := worst[x.name]
			if x.v > w.Measured || w.MeasuredMode == "" {
				w.Measured, w.MeasuredMode, w.Seed = max(w.Measured, x.v), mc.Mode, x.seed
			}
			if x.v > w.Limit {
				a.ConfirmedOK = false
			}
		}
		// Keep, for CI, the schedule that came closest to breaking a
		// constraint, with the constraints as its expectations.
		pick, score := 0, -1.0
		for k, metric := range metrics {
			w := ws[metric]
			if !w.Found || limits[k] == NoLimit {
				continue
			}
			v := float64(w.Measured) / float64(max(limits[k], time.Millisecond))
			if v > score {
				pick, score = k, v
			}
		}
		// The robust schedule near it when there is one: the real
		// backend's timing is not exact to the µs an edge case needs.
		sched, what := ws[metrics[pick]].Schedule, fmt.Sprintf("the worst %s the search found (%s over %d runs)", metrics[pick], model.DurationText(ws[metrics[pick]].Measured), r.Runs)
		if x := r.Robust[pick]; x.Found {
			sched, what = x.Schedule, fmt.Sprintf("near the worst %s the search found (%s over %d runs), the schedule that keeps %s when every start moves by ±%v", metrics[pick], model.DurationText(ws[metrics[pick]].Measured), r.Runs, x.value(x.Floor), x.Delta)
		}
		keep, err := r.Space.Scenario(sched)
		if err != nil {
			return fmt.Errorf("confirming %s: %w", mc.Mode, err)
		}
		keep.Name = sc.Name
		keep.Description = fmt.Sprintf("%s The schedule: %s, seed %d; the constraints are the expectations.", sc.Description, what, keep.Seed)
		keep.Expect = ConstraintExpect(c)
		a.Scenarios = append(a.Scenarios, keep)
	}
	return nil
}

// Markdown renders the advice for a terminal or a review.
func (a Advice) Markdown() string {
	var b strings.Builder
	w := func(format string, x ...any) { fmt.Fprintf(&b, format, x...) }
	c, e := a.Constraints, a.Envelope
	w("# chaos advise\n\n")
	w("**Constraints:** max gap %s, max overlap %s, max stale leadership %s", dur(c.MaxGap), dur(c.MaxOverlap), dur(c.MaxStale))
	if c.NoStaleWrites {
		w(", no stale writes")
	}
	if c.MaxDuplicateChores != nil {
		w(", at most %d duplicate chores per failover (runner mode)", *c.MaxDuplicateChores)
	}
	if e.Empty() {
		w(".  \n**Envelope: empty.** No envelope was given (--latency-p99, --latency-max, --max-pause,\n" +
			"--max-suspend, --max-drift, --partitions, --redis-restarts): the timings below are\n" +
			"checked against leader crashes, graceful stops and renewal errors only, and promise nothing\n" +
			"under latency, pauses, clock drift, partitions or Redis restarts.\n\n")
	} else {
		envelopeLine(w, e)
	}
	if a.Feasible {
		w("## Recommendation\n\n")
	} else {
		w("## No setting meets the constraints\n\nThe closest miss is below. To get a setting, relax one constraint:\n\n")
		for _, r := range a.Relax {
			if r.To < 0 {
				w("- %s: %s\n", r.Constraint, r.Note)
				continue
			}
			from, to := dur(r.From), r.To.String()
			if r.Count {
				from, to = fmt.Sprint(r.FromCount), fmt.Sprint(r.ToCount)
			}
			w("- **%s** from %s to **%s** (%s), with TTL %v, Wait %v, read timeout %v, max retries %s, %s mode\n",
				r.Constraint, from, to, r.Note, r.Params.TTL, r.Params.Wait, r.Params.Client.ReadTimeout, retriesText(r.Params.Client.MaxRetries), modeName(r.Params.Safe))
		}
		w("\n## Closest miss\n\n")
	}
	w("| setting | value | why |\n|---|---|---|\n")
	for _, s := range a.Settings {
		w("| %s | %s | %s |\n", s.Name, s.Value, s.Why)
	}
	w("\n## Margins (worst case over the envelope)\n\n| constraint | limit | predicted | mode | virtual | headroom (predicted) |\n|---|---|---|---|---|---|\n")
	for _, m := range a.Margins {
		meas := "not confirmed"
		if m.Measured >= 0 {
			meas = fmt.Sprintf("%s (%s, seed %d)", model.DurationText(m.Measured), m.MeasuredMode, m.Seed)
		}
		head := dur(m.Headroom)
		if m.Headroom < 0 {
			head = fmt.Sprintf("**%s over**", model.DurationText(-m.Headroom))
		}
		w("| %s | %s | %v | %s | %s | %s |\n", m.Constraint, dur(m.Limit), m.Predicted, m.Mode, meas, head)
	}
	if ch := a.Chores; ch != nil {
		pred := strconv.Itoa(ch.Predicted)
		if ch.Predicted == math.MaxInt {
			pred = "unbounded"
		}
		meas := "not confirmed"
		if ch.Measured >= 0 {
			meas = fmt.Sprintf("%d (%s in runner mode, seed %d)", ch.Measured, ch.MeasuredMode, ch.Seed)
		}
		w("\n**Duplicate chores per failover** (runner mode, chore interval %v): at most %d; predicted %s (%s: 3 chores × (2·⌈overlap / interval⌉ + 1), one more each after a pause); virtual %s.\n",
			orDefault(a.Params.ChoreInterval, model.DefaultChoreInterval), ch.Limit, pred, ch.Mode, meas)
	}
	w("\n## Predicted vs virtual, per failure mode\n\n| mode | predicted gap | virtual gap | predicted overlap | virtual overlap | virtual stale | runs |\n|---|---|---|---|---|---|---|\n")
	for _, m := range a.Modes {
		if m.Measured == nil {
			w("| %s | %v | — | %v | — | — | not modelled as a fault |\n", m.Mode, m.Prediction.MaxGap, m.Prediction.MaxOverlap)
			continue
		}
		x := m.Measured
		w("| %s | %v | %s | %v | %s | %s | %d |\n", m.Mode, m.Prediction.MaxGap, model.DurationText(x.MaxGap), m.Prediction.MaxOverlap, model.DurationText(x.MaxOverlap), model.DurationText(x.MaxStale), x.Runs)
	}
	modelError := false
	for _, m := range a.Modes {
		if m.Measured != nil && len(m.Measured.Exceeds) > 0 {
			modelError = true
			w("\n**Model error:** %s measured above its prediction: %s. Report it; the prediction, not a tolerance, needs fixing.\n", m.Mode, strings.Join(m.Measured.Exceeds, "; "))
		}
	}
	if a.Confirmed {
		switch {
		case modelError:
			w("\n**Confirmation failed:** the search of the worst schedules found a measurement above its prediction (a model error, above), so the margins cannot be trusted.\n")
		case a.ConfirmedOK:
			w("\nThe search of the worst schedules confirms it: no schedule it found breaks the constraints.\n")
		default:
			w("\n**The search found schedules that break the constraints** (see above).\n")
		}
		var nb []string
		for _, m := range a.Modes {
			for _, n := range m.Neighbours {
				mark := "meets"
				if !n.Meets {
					mark = "breaks"
				}
				nb = append(nb, fmt.Sprintf("%s at TTL %v: gap %s, overlap %s (%s)", m.Mode, n.TTL, model.DurationText(n.MaxGap), model.DurationText(n.MaxOverlap), mark))
			}
		}
		if len(nb) > 0 {
			w("\nNeighbours (virtual, other timings fixed):\n\n")
			for _, s := range nb {
				w("- %s\n", s)
			}
		}
	}
	if len(a.Real) > 0 {
		runner := slices.ContainsFunc(a.Real, func(r RealCheck) bool { return r.Runner })
		head, rule, empty := "| scenario | verdict | gap real / virtual | overlap real / virtual | stale real / virtual |", "|---|---|---|---|---|", " | | |"
		if runner {
			head, rule, empty = head+" duplicate chores real / virtual | stale chores real / virtual |", rule+"---|---|", empty+" | |"
		}
		w("\n## Real backend beside virtual (the confirming scenarios, same schedules and seeds)\n\n%s\n%s\n", head, rule)
		for _, r := range a.Real {
			if r.Error != "" {
				w("| %s | not run: %s |%s\n", r.Scenario, r.Error, empty)
				continue
			}
			ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
			w("| %s | %s | %v / %v | %v / %v | %v / %v |", r.Scenario, r.Verdict, ms(r.Gap), ms(r.VirtualGap), ms(r.Overlap), ms(r.VirtualOverlap), ms(r.Stale), ms(r.VirtualStale))
			switch {
			case r.Runner:
				w(" %d / %d | %d / %d |", r.DuplicateChores, r.VirtualDuplicateChores, r.StaleChores, r.VirtualStaleChores)
			case runner:
				w(" elector mode | |")
			}
			w("\n")
		}
	}
	w("\n## Formulas (bounds.PredictMode)\n\n")
	for _, m := range a.Modes {
		w("- **%s**: gap %s; overlap %s", m.Mode, m.Prediction.GapFormula, m.Prediction.OverlapFormula)
		if m.Prediction.CallFormula != "" {
			w("; C: %s", m.Prediction.CallFormula)
		}
		w("\n")
	}
	if len(a.Breaks) > 0 {
		w("\n## If the envelope is exceeded\n\n")
		if a.BreaksFirst != "" {
			w("What breaks first: **%s**.\n\n", a.BreaksFirst)
		}
		w("| edge | envelope | survives up to | then breaks |\n|---|---|---|---|\n")
		for _, br := range a.Breaks {
			th := br.Threshold
			if th == "" {
				th = "every value tried"
			}
			w("| %s | %s | %s | %s |\n", br.Dimension, br.Envelope, th, br.Breaks)
		}
	}
	if len(a.Notes) > 0 {
		w("\n## Notes\n\n")
		for _, n := range a.Notes {
			w("- %s\n", n)
		}
	}
	return b.String()
}

// envelopeLine writes the envelope the advice is for, every edge of it.
func envelopeLine(w func(string, ...any), e Envelope) {
	w(".  \n**Envelope:** one-way latency p99 %s, max %s; pauses up to %s", dur(e.LatencyP99), dur(e.LatencyMax), dur(e.MaxPause))
	if e.MaxSuspend > 0 {
		w("; suspends up to %s", dur(e.MaxSuspend))
	}
	if e.MaxRedisPause > 0 {
		w("; Redis pauses up to %s", dur(e.MaxRedisPause))
	}
	w("; clocks up to %.3g%% slow; partitions: %s; Redis restarts: ", 100*e.MaxClockDrift, orNone(strings.Join(e.Partitions, ", ")))
	if e.RedisRestarts {
		w("yes (down up to %v)", e.RedisDowntime)
	} else {
		w("no")
	}
	w("; leader crashes and graceful stops always.\n\n")
}

// Empty reports whether the envelope asks to survive nothing beyond what
// every advice does (leader crashes, graceful stops, renewal errors): no
// latency, pause, suspend, Redis pause, clock drift, partition or Redis
// restart.
func (e Envelope) Empty() bool {
	return e.LatencyP99 == 0 && e.LatencyMax == 0 && e.MaxPause == 0 && e.MaxSuspend == 0 && e.MaxRedisPause == 0 &&
		e.MaxClockDrift == 0 && len(e.Partitions) == 0 && !e.RedisRestarts
}

func retriesText(n int) string {
	if n < 0 {
		return "none"
	}
	return fmt.Sprint(n)
}

func modeName(safe bool) string {
	if safe {
		return "safe"
	}
	return "spec"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Verdict is the advice's as an error: nil when a setting meets the
// constraints, its confirmation (if one ran) found nothing against it,
// and every confirming scenario run on the real backend passed; else
// what failed first.
func (a Advice) Verdict() error {
	switch {
	case !a.Feasible:
		return errors.New("no setting meets the constraints under this envelope (see Relax above)")
	case a.Confirmed && !a.ConfirmedOK:
		return errors.New("the confirmation failed: the search found a model error or a schedule that breaks the constraints (see above)")
	}
	for _, r := range a.Real {
		if r.Verdict != string(model.Pass) {
			return fmt.Errorf("%s on the real backend: %s%s", r.Scenario, r.Verdict, r.Error)
		}
	}
	return nil
}

// orDefault is d, or def when d is not set.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
