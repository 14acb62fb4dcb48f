package bounds

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"

	"slices"
	"strings"
	"testing"
	"time"
)

// tunedTimings is the tuned configuration: sub-second lease, client calls
// bounded well below TTL/2.
var tunedTimings = model.Params{
	TTL: 500 * time.Millisecond, Wait: time.Second, JitterMS: -1,
	Client: model.ClientParams{ReadTimeout: 100 * time.Millisecond, MaxRetries: -1},
}

func TestCallBound(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name string
		p    model.Params
		mode string
		want time.Duration
	}{
		// The pooled attempt times out, the retry's new connection times out
		// in HELLO, whose own retry sleeps backoff(1) before failing on the
		// removed connection: 2 × ReadTimeout + 2 × backoff(1).
		{"blackhole, defaults: read timeout retried once on a new connection", model.Params{}, model.ModePartitionBlackhole, 10*time.Second + 60*ms},
		{"blackhole, ReadTimeout 500ms", model.Params{Client: model.ClientParams{ReadTimeout: 500 * ms}}, model.ModePartitionBlackhole, time.Second + 60*ms},
		{"blackhole, ReadTimeout 300ms: measured 629-658ms", model.Params{Client: model.ClientParams{ReadTimeout: 300 * ms}}, model.ModePartitionBlackhole, 660 * ms},
		{"blackhole, no retries", model.Params{Client: model.ClientParams{ReadTimeout: 500 * ms, MaxRetries: -1}}, model.ModePartitionBlackhole, 500 * ms},
		{"blackhole, context deadline caps it", model.Params{OpTimeout: time.Second, Client: model.ClientParams{ContextTimeoutEnabled: true}}, model.ModePartitionBlackhole, time.Second},
		{"blackhole, OpTimeout ignored without ContextTimeoutEnabled", model.Params{OpTimeout: time.Second}, model.ModePartitionBlackhole, 10*time.Second + 60*ms},
		{"blackhole, no read timeout", model.Params{Client: model.ClientParams{ReadTimeout: -1}}, model.ModePartitionBlackhole, model.Unbounded},
		{"blackhole, no read timeout but a context deadline", model.Params{OpTimeout: 2 * time.Second, Client: model.ClientParams{ReadTimeout: -1, ContextTimeoutEnabled: true}}, model.ModePartitionBlackhole, 2 * time.Second},
		{"latency is bounded like a blackhole", model.Params{}, model.ModeLatency, 10*time.Second + 60*ms},
		// The pool's health check drops the connection the proxy closed;
		// every attempt then dials a refused port DialerRetries times, 100ms
		// apart.
		{"refuse, defaults: the health check drops the closed connection, 4 dial rounds of 4 × 100ms plus backoffs", model.Params{}, model.ModePartitionRefuse, 4*400*ms + (30+50+90)*ms},
		{"refuse, ReadTimeout does not enter", model.Params{Client: model.ClientParams{ReadTimeout: 300 * ms}}, model.ModePartitionRefuse, 1770 * ms},
		{"refuse, no retries: one dial round", model.Params{Client: model.ClientParams{MaxRetries: -1}}, model.ModePartitionRefuse, 400 * ms},
		{"refuse, context deadline caps it", model.Params{OpTimeout: 450 * ms, Client: model.ClientParams{ContextTimeoutEnabled: true}}, model.ModePartitionRefuse, 450 * ms},
		// the backoff and dial-retry sleeps watch the context anyway
		{"refuse, OpTimeout caps it without ContextTimeoutEnabled", model.Params{OpTimeout: 450 * ms}, model.ModePartitionRefuse, 450 * ms},
		// Reset at once, every time; the time is all backoffs: the command's
		// retries, and for each retry's new connection HELLO's own retries
		// on the error it keeps.
		{"reset, defaults: (MaxRetries + 1) × backoffs", model.Params{}, model.ModePartitionReset, 4 * (30 + 50 + 90) * ms},
		{"reset, MaxRetries 1", model.Params{Client: model.ClientParams{MaxRetries: 1}}, model.ModePartitionReset, 2 * 30 * ms},
		{"reset, no retries", model.Params{Client: model.ClientParams{MaxRetries: -1}}, model.ModePartitionReset, 0},
		{"reset, context deadline caps it", model.Params{OpTimeout: 450 * ms, Client: model.ClientParams{ContextTimeoutEnabled: true}}, model.ModePartitionReset, 450 * ms},
		{"crash makes no call", model.Params{}, model.ModeLeaderCrash, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CallBound(tt.p, tt.mode); got != tt.want {
				t.Errorf("CallBound = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCallMin: the lower bound of each failing call, checked against the
// harness's measurements in callbound_test.go.
func TestCallMin(t *testing.T) {
	const ms = time.Millisecond
	rt300 := model.ClientParams{ReadTimeout: 300 * ms}
	tests := []struct {
		name string
		p    model.Params
		mode string
		want time.Duration
	}{
		{"refuse: 4 dial rounds and 3 minimal backoffs", model.Params{Client: rt300}, model.ModePartitionRefuse, 4*400*ms + 30*ms},
		{"refuse, no retries: one dial round", model.Params{Client: model.ClientParams{MaxRetries: -1}}, model.ModePartitionRefuse, 400 * ms},
		{"refuse, context deadline", model.Params{OpTimeout: 450 * ms, Client: model.ClientParams{ContextTimeoutEnabled: true}}, model.ModePartitionRefuse, 450 * ms},
		{"reset: 4 × 3 minimal backoffs", model.Params{Client: rt300}, model.ModePartitionReset, 120 * ms},
		{"reset, no retries", model.Params{Client: model.ClientParams{MaxRetries: -1}}, model.ModePartitionReset, 0},
		{"reset, context deadline longer than the minimum", model.Params{OpTimeout: 450 * ms, Client: model.ClientParams{ContextTimeoutEnabled: true}}, model.ModePartitionReset, 120 * ms},
		{"blackhole", model.Params{Client: rt300}, model.ModePartitionBlackhole, 600 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p.WithDefaults()
			got, f := callMin(p, tt.mode)
			if got != tt.want || !strings.HasSuffix(f, BoundText(got)) {
				t.Errorf("callMin = %v (%q), want %v", got, f, tt.want)
			}
			if hi := CallBound(p, tt.mode); got > hi {
				t.Errorf("callMin %v above CallBound %v", got, hi)
			}
		})
	}
}

func mustPredict(t *testing.T, p model.Params, mode string, s model.FaultSize) Prediction {
	t.Helper()
	pr, ok := PredictMode(p, mode, s)
	if !ok {
		t.Fatalf("no prediction for %s", mode)
	}
	return pr
}

func TestPredictBlackholeDefaultsBreaksTheSpecClaim(t *testing.T) {
	const ms = time.Millisecond
	// Spec defaults and go-redis defaults: the blackholed leader renews 2.5s
	// after its last renewal, waits ~10s for the call to fail, while its key
	// expired at 5s. Overlap ≈ 2.5 + 10 - 5 = 7.5s, plus jitter and the two
	// backoffs (the command's retry and HELLO's).
	pr := mustPredict(t, model.Params{}, model.ModePartitionBlackhole, model.FaultSize{})
	if pr.MaxOverlap != 7565*ms {
		t.Errorf("overlap %v, want 7.5s + jitter 5ms + backoffs 60ms", pr.MaxOverlap)
	}
	if Within(pr.MaxOverlap, model.DefaultTTL, analysis.ClaimSlack) {
		t.Errorf("overlap %v should exceed the spec's TTL bound", pr.MaxOverlap)
	}
	for _, s := range []string{"TTL/2", "jitter", "C", "2.5s", "5ms", "10.06s", "5s", "7.565s"} {
		if !strings.Contains(pr.OverlapFormula, s) {
			t.Errorf("overlap formula %q lacks %q", pr.OverlapFormula, s)
		}
	}
	if pr.Call != 10*time.Second+60*ms || !strings.Contains(pr.CallFormula, "ReadTimeout") || !strings.Contains(pr.CallFormula, "10.06s") {
		t.Errorf("call %v %q", pr.Call, pr.CallFormula)
	}
	// The gap case: a renewal sent into the partition fails after the
	// whole call, two 5s timeouts, longer than TTL/2 + Wait - TTL/2: the
	// leader still believes when the latest follower attempt comes. But a
	// partition a hop after the send lets the renewal apply: its key lives
	// TTL from then, and the call ends 10s later: a gap of up to 1s.
	if pr.MaxGap != time.Second || !strings.Contains(pr.GapFormula, "max(0, TTL + Wait - Cmid) = max(0, 5s + 6s - 10s) = 1s") {
		t.Errorf("gap %v %q, want max(0, TTL + Wait - 2 × ReadTimeout) = 1s", pr.MaxGap, pr.GapFormula)
	}
}

// TestPredictBlackholeGapUsesWholeCall: the shortest failing call (Cmin) is
// the whole call without its backoffs, not one attempt timeout, and an
// OpTimeout shortens it only as go-redis lets it. The gap is that of a
// renewal that reached Redis a hop before the partition (TTL + Wait -
// Cmid), where a heal's EOF ends the call at once without retries, and on
// the retry's HELLO with one retry (Cmid = one attempt, T).
func TestPredictBlackholeGapUsesWholeCall(t *testing.T) {
	const ms = time.Millisecond
	rt := func(c model.ClientParams) model.ClientParams { c.ReadTimeout = 300 * ms; return c }
	tests := []struct {
		name string
		p    model.Params
		cmin time.Duration
		cmid time.Duration
	}{
		// pooled attempt + the retry's HELLO: measured 629-658ms in the harness
		{"ReadTimeout 300ms, default retries", model.Params{Client: rt(model.ClientParams{})}, 600 * ms, 600 * ms},
		{"no retries: one attempt", model.Params{Client: rt(model.ClientParams{MaxRetries: -1})}, 300 * ms, 300 * ms},
		{"MaxRetries 1 still times out twice", model.Params{Client: rt(model.ClientParams{MaxRetries: 1})}, 600 * ms, 300 * ms},
		// with ContextTimeoutEnabled the deadline ends the call
		{"context deadline", model.Params{OpTimeout: 450 * ms, Client: rt(model.ClientParams{ContextTimeoutEnabled: true})}, 450 * ms, 450 * ms},
		// without it the first read still waits out ReadTimeout, then the
		// backoff sleep sees the expired context
		{"OpTimeout without ContextTimeoutEnabled, shorter than ReadTimeout", model.Params{OpTimeout: 100 * ms, Client: rt(model.ClientParams{})}, 300 * ms, 300 * ms},
		{"OpTimeout without ContextTimeoutEnabled, between", model.Params{OpTimeout: 450 * ms, Client: rt(model.ClientParams{})}, 450 * ms, 450 * ms},
		{"OpTimeout without ContextTimeoutEnabled, longer than the call", model.Params{OpTimeout: time.Second, Client: rt(model.ClientParams{})}, 600 * ms, 600 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p
			p.TTL, p.Wait, p.JitterMS = 5*time.Second, 6*time.Second, -1
			// A 2s partition can heal while a call it caught waits.
			pr := mustPredict(t, p, model.ModePartitionBlackhole, model.FaultSize{Partition: 2 * time.Second})
			if want := 11*time.Second - tt.cmid; pr.MaxGap != want {
				t.Errorf("gap %v (%s), want TTL + Wait - Cmid = 11s - %v = %v", pr.MaxGap, pr.GapFormula, tt.cmid, want)
			}
			if !strings.Contains(pr.GapFormula, "Cmid") || !strings.Contains(pr.GapFormula, BoundText(tt.cmid)) {
				t.Errorf("gap formula %q lacks Cmid = %v", pr.GapFormula, tt.cmid)
			}
			if lo, f := callMin(p.WithDefaults(), model.ModePartitionBlackhole); lo != tt.cmin || lo > CallBound(p, model.ModePartitionBlackhole) {
				t.Errorf("callMin %v (%s), want %v, at most CallBound %v", lo, f, tt.cmin, CallBound(p, model.ModePartitionBlackhole))
			}
		})
	}
}

func TestPredictShortTimeoutsHaveNoOverlap(t *testing.T) {
	const ms = time.Millisecond
	for _, jitter := range []int{0, 5} {
		p := tunedTimings
		p.JitterMS = jitter
		pr := mustPredict(t, p, model.ModePartitionBlackhole, model.FaultSize{})
		if pr.MaxOverlap != 0 {
			t.Errorf("jitter %dms: overlap %v (%s), want 0", jitter, pr.MaxOverlap, pr.OverlapFormula)
		}
		if pr.Call != 100*ms {
			t.Errorf("call %v, want one 100ms attempt", pr.Call)
		}
		if !strings.HasPrefix(pr.OverlapFormula, "max(0, ") || !strings.HasSuffix(pr.OverlapFormula, "= 0s") {
			t.Errorf("formula %q", pr.OverlapFormula)
		}
	}
}

func TestPredictLeaderCrash(t *testing.T) {
	const ms = time.Millisecond
	pr := mustPredict(t, model.Params{}, model.ModeLeaderCrash, model.FaultSize{})
	if pr.MaxGap < 11*time.Second || pr.MaxGap > 11*time.Second+5*ms {
		t.Errorf("gap %v, want TTL + Wait (+ jitter at most)", pr.MaxGap)
	}
	if pr.GapFormula != "TTL + Wait = 5s + 6s = 11s" {
		t.Errorf("gap formula %q", pr.GapFormula)
	}
	if pr.MaxOverlap != 0 {
		t.Errorf("overlap %v", pr.MaxOverlap)
	}
	short := mustPredict(t, tunedTimings, model.ModeLeaderCrash, model.FaultSize{})
	if short.MaxGap != 1500*ms || !strings.Contains(short.GapFormula, "500ms + 1s") {
		t.Errorf("short: %v %q", short.MaxGap, short.GapFormula)
	}
}

func TestPredictModes(t *testing.T) {
	const ms = time.Millisecond
	s := model.FaultSize{Latency: 200 * ms, Pause: 10 * time.Second, ClockRate: 0.4}
	tests := []struct {
		mode         string
		p            model.Params
		s            model.FaultSize
		gap, overlap time.Duration
	}{
		{model.ModeRenewError, model.Params{}, s, 8500 * ms, 0},
		// a renewal that reached Redis before the proxy closed its
		// connection: its key lives TTL, its retries dial for 1.23s at least
		{model.ModePartitionRefuse, model.Params{}, s, 9770 * ms, 0},
		{model.ModePartitionReset, model.Params{}, s, 8500 * ms, 0},
		// no retries: the renewal dials one round (400ms) and fails,
		// 150ms past the 500ms TTL; a renewal that reached Redis before the
		// close takes the EOF at once: TTL + Wait
		{model.ModePartitionRefuse, tunedTimings, s, 1500 * ms, 150 * ms},
		// an earlier refusal may have left the dial breaker one round from
		// tripping: 1 round of 400ms
		{model.ModePartitionRefuse, model.Params{}, model.FaultSize{Refusals: 2}, 10600 * ms, 0},
		// retries: 1.77s of dialing a refused port outlasts a 1s TTL
		{model.ModePartitionRefuse, model.Params{TTL: time.Second, Wait: time.Second, JitterMS: -1}, s, 1500 * ms, 1270 * ms},
		// reset: 680ms of backoffs
		{model.ModePartitionReset, model.Params{TTL: time.Second, Wait: time.Second, JitterMS: -1}, s, 1500 * ms, 180 * ms},
		{model.ModeLatency, model.Params{}, model.FaultSize{Latency: 200 * ms}, 0, 0},
		// 2L = 3s < 5s read timeout, but renewals now land every 5.505s >
		// TTL after a reply late by L; the slow instance may win next,
		// believed a late reply after
		{model.ModeLatency, model.Params{}, model.FaultSize{Latency: 1500 * ms}, 7500 * ms, 2505*ms + 4500*ms - 5*time.Second},
		// a cold renewal: two round trips (EVALSHA, NOSCRIPT, EVAL)
		{model.ModeLatency, model.Params{}, model.FaultSize{Latency: 1500 * ms, ColdRenewal: true}, 7500 * ms, 2505*ms + 6*time.Second - 5*time.Second},
		// ... after a late reply
		{model.ModeLatency, model.Params{}, model.FaultSize{Latency: 1500 * ms, ColdAfterLateReply: true}, 7500 * ms, 2505*ms + 7500*ms - 5*time.Second},
		// ... under a 5s deadline on the whole call (context timeouts): the
		// two round trips outlast it, the EVAL sent at R lands at R + L:
		// TTL + Wait + R + L - T_op
		{model.ModeLatency, model.Params{OpTimeout: 5 * time.Second, Client: model.ClientParams{ContextTimeoutEnabled: true}}, model.FaultSize{Latency: 1500 * ms, ColdRenewal: true}, 10500 * ms, 2505*ms + 6*time.Second - 5*time.Second},
		// 2L >= read timeout: every attempt times out like a blackhole (after
		// a reply late by L), and late writes extend the key
		{model.ModeLatency, model.Params{}, model.FaultSize{Latency: 3 * time.Second}, 9 * time.Second, 10565 * ms},
		{model.ModeLatency, model.Params{}, model.FaultSize{}, 0, 0},
		// a 10s pause: the leader believes at least P - TTL = 5s past the
		// expiry, so a follower's attempt, within Wait of it, misses that
		// window by at most Wait + TTL - P (+ hop)
		{model.ModePause, model.Params{}, s, 1001 * ms, 7505 * ms},
		// a suspend: at least P + TTL/2 - TTL = 7.5s > Wait: a follower
		// always wins first
		{model.ModeSuspend, model.Params{}, s, 0, 7505 * ms},
		// 8s: 8s + 2.5s - 5s = 5.5s of the 6s Wait
		{model.ModeSuspend, model.Params{}, model.FaultSize{Pause: 8 * time.Second}, 501 * ms, 5505 * ms},
		{model.ModePause, model.Params{}, model.FaultSize{Pause: 2 * time.Second}, 0, 0},
		// 2.505s + 2.6s > TTL: the late renewal misses the expiry by 105ms,
		// and returns 0 a hop after the resume, past it
		{model.ModePause, model.Params{}, model.FaultSize{Pause: 2600 * ms}, 6001 * ms, 105 * ms},
		// P = TTL: the window P - TTL is empty, the cap keeps the hop
		{model.ModePause, model.Params{}, model.FaultSize{Pause: 5 * time.Second}, 6001 * ms, 2505 * ms},
		{model.ModePause, model.Params{}, model.FaultSize{}, 0, 0},
		// safe mode: a 2.45s pause ends past the guard (TTL - margin =
		// 4.948s after the send) but before the key expires: demoted there,
		// the leader's own attempt Wait later wins (spec mode: gap 0)
		{model.ModePause, model.Params{Safe: true}, model.FaultSize{Pause: 2450 * ms}, 6001 * ms, 0},
		// ... a 2.4s one ends before the guard: the late renewal lands
		{model.ModePause, model.Params{Safe: true}, model.FaultSize{Pause: 2400 * ms}, 0, 0},
		// ... the clock stops under a suspend: the renewal fires before the guard
		{model.ModeSuspend, model.Params{Safe: true}, model.FaultSize{Pause: 2450 * ms}, 0, 0},
		// ... a pause of exactly the TTL ends past the guard too
		{model.ModePause, model.Params{Safe: true}, model.FaultSize{Pause: 5 * time.Second}, 6001 * ms, 2505 * ms},
		// several pauses: a 1s one does not hide the 2.45s one from the
		// guard term (PauseShortMax), nor an 8s one
		{model.ModePause, model.Params{Safe: true}, model.FaultSize{Pause: 2450 * ms, PauseMin: time.Second, PauseShortMax: 2450 * ms}, 6001 * ms, 0},
		{model.ModePause, model.Params{Safe: true}, model.FaultSize{Pause: 8 * time.Second, PauseMin: 2450 * ms, PauseShortMax: 2450 * ms}, 6001 * ms, 5505 * ms},
		// ... the gap takes the shortest: 2.45s leaves Wait (+ hop) of the window
		{model.ModePause, model.Params{}, model.FaultSize{Pause: 8 * time.Second, PauseMin: 2450 * ms, PauseShortMax: 2450 * ms}, 6001 * ms, 5505 * ms},
		// ... two long ones: 8s and 10s, the 8s one's window
		{model.ModePause, model.Params{}, model.FaultSize{Pause: 10 * time.Second, PauseMin: 8 * time.Second}, 3001 * ms, 7505 * ms},
		// ... safe mode, a 2.4s pause is before the guard: only the 8s one
		{model.ModePause, model.Params{Safe: true}, model.FaultSize{Pause: 8 * time.Second, PauseMin: 2400 * ms, PauseShortMax: 2400 * ms}, 6001 * ms, 5505 * ms},
		{model.ModePause, model.Params{Safe: true}, model.FaultSize{Pause: 8 * time.Second, PauseMin: 8 * time.Second}, 3001 * ms, 5505 * ms},
		{model.ModeClockDrift, model.Params{}, s, 6 * time.Second, 1262500 * time.Microsecond},
		{model.ModeClockDrift, model.Params{}, model.FaultSize{ClockRate: 0.6}, 0, 0},
		{model.ModeClockDrift, model.Params{}, model.FaultSize{ClockRate: 3}, 0, 0},
		{model.ModeClockDrift, model.Params{}, model.FaultSize{}, 0, 0},
		{model.ModeLeaseLoss, model.Params{}, s, 6170 * ms, 2535 * ms},
		{model.ModeGracefulStop, model.Params{}, s, 6 * time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			pr := mustPredict(t, tt.p, tt.mode, tt.s)
			if pr.MaxGap != tt.gap || pr.MaxOverlap != tt.overlap {
				t.Errorf("%+v: gap %v overlap %v, want %v %v\n%s\n%s", tt.s, pr.MaxGap, pr.MaxOverlap, tt.gap, tt.overlap, pr.GapFormula, pr.OverlapFormula)
			}
			for _, f := range []string{pr.GapFormula, pr.OverlapFormula} {
				if !strings.Contains(f, BoundText(pr.MaxGap)) && !strings.Contains(f, BoundText(pr.MaxOverlap)) && !strings.HasPrefix(f, "0") {
					t.Errorf("formula %q shows neither result", f)
				}
			}
		})
	}
}

func TestPredictCoversEveryMode(t *testing.T) {
	prs := Predict(model.Params{}, model.FaultSize{Latency: 3 * time.Second, Pause: 10 * time.Second, ClockRate: 0.4})
	if len(prs) != len(Modes) {
		t.Fatalf("%d predictions for %d modes", len(prs), len(Modes))
	}
	for i, pr := range prs {
		if pr.Mode != Modes[i] {
			t.Errorf("prediction %d is %s, want %s", i, pr.Mode, Modes[i])
		}
		if !strings.Contains(pr.GapFormula, "=") || !strings.Contains(pr.OverlapFormula, ":") && !strings.Contains(pr.OverlapFormula, "=") {
			t.Errorf("%s: formulas %q / %q", pr.Mode, pr.GapFormula, pr.OverlapFormula)
		}
		if pr.Note == "" {
			t.Errorf("%s: no note", pr.Mode)
		}
	}
	if _, ok := PredictMode(model.Params{}, "meteor-strike", model.FaultSize{}); ok {
		t.Error("unknown mode predicted")
	}
}

func TestPredictUnboundedCall(t *testing.T) {
	pr := mustPredict(t, model.Params{Client: model.ClientParams{ReadTimeout: -1}}, model.ModePartitionBlackhole, model.FaultSize{})
	if pr.MaxOverlap != model.Unbounded || !strings.HasSuffix(pr.OverlapFormula, "= unbounded") {
		t.Errorf("overlap %v %q", pr.MaxOverlap, pr.OverlapFormula)
	}
	if !Within(time.Hour, pr.MaxOverlap, analysis.ClaimSlack) {
		t.Error("an hour is within an unbounded prediction")
	}
}

func TestWithin(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		measured, predicted, slack time.Duration
		want                       bool
	}{
		{5 * time.Second, 5 * time.Second, 0, true},
		{5*time.Second + 1, 5 * time.Second, 0, false},
		{5*time.Second + 50*ms, 5 * time.Second, 50 * ms, true},
		{5*time.Second + 51*ms, 5 * time.Second, 50 * ms, false},
		{model.Unbounded, model.Unbounded, 0, true},
		{time.Hour, model.Unbounded - 1, time.Second, true}, // no overflow
		{30 * ms, 0, 50 * ms, true},
	}
	for _, tt := range tests {
		if got := Within(tt.measured, tt.predicted, tt.slack); got != tt.want {
			t.Errorf("Within(%v, %v, %v) = %v", tt.measured, tt.predicted, tt.slack, got)
		}
	}
}

func TestCallBoundSharedPool(t *testing.T) {
	p := model.Params{}.WithDefaults()
	alone := CallBound(p, model.ModePartitionBlackhole)
	p.Client.SharedPool = true
	shared := CallBound(p, model.ModePartitionBlackhole)
	// 4 attempts of 5s and backoffs of up to 30ms, 50ms and 90ms, and the
	// last attempt's HELLO retry backoff if it got a new connection.
	if alone != 10060*time.Millisecond || shared != 20200*time.Millisecond {
		t.Fatalf("blackholed call: alone %v, shared pool %v", alone, shared)
	}
}

// TestPredictPartitionReplies: with replies dropped the renewal applies, so
// the lost renewal extends the key TTL past the moment it was sent; the
// blackhole model, which has the key expire TTL after the previous renewal,
// is off by TTL/2 + jitter in both bounds.
func TestPredictPartitionReplies(t *testing.T) {
	const ms, s = time.Millisecond, time.Second
	rt300 := func(c model.ClientParams) model.ClientParams { c.ReadTimeout = 300 * ms; return c }
	spec := func(c model.ClientParams) model.Params {
		return model.Params{TTL: 5 * s, Wait: 6 * s, JitterMS: -1, Client: c}
	}
	tests := []struct {
		name         string
		p            model.Params
		size         model.FaultSize
		gap, overlap time.Duration
		gapFormula   string
	}{
		// defaults: C = 10.06s, Cmin = 10s
		{"defaults", model.Params{}, model.FaultSize{}, 1 * s, 5060 * ms,
			"max(sent into the fault: max(0, TTL/2 + Wait - Cheal) = max(0, 2.5s + 6s - 10s) = 0s; reached Redis, reply lost: max(0, TTL + Wait - Cheal) = max(0, 5s + 6s - 10s) = 1s) = 1s"},
		// no retries: the leader gives up after 300ms, its key lives 5s more
		{"ReadTimeout 300ms, no retries", spec(rt300(model.ClientParams{MaxRetries: -1})), model.FaultSize{}, 10700 * ms, 0,
			"max(sent into the fault: max(0, TTL/2 + Wait - Cheal) = max(0, 2.5s + 6s - 300ms) = 8.2s; reached Redis, reply lost: max(0, TTL + Wait - Cheal) = max(0, 5s + 6s - 300ms) = 10.7s) = 10.7s"},
		// a 2s partition may heal while the call waits: its EOF ends it at once
		{"ReadTimeout 300ms, no retries, short partition", spec(rt300(model.ClientParams{MaxRetries: -1})), model.FaultSize{Partition: 2 * s}, 11 * s, 0,
			"max(sent into the fault: TTL/2 + Wait = 2.5s + 6s = 8.5s; reached Redis, reply lost: TTL + Wait = 5s + 6s = 11s) = 11s"},
		{"ReadTimeout 300ms, retries", spec(rt300(model.ClientParams{})), model.FaultSize{}, 10400 * ms, 0, ""},
		// A bare elector's demoted leader has no initialized connection
		// left: its acquire's HELLO times out before SET NX is written, so
		// a long partition leaves no phantom lease (TestCallBoundMeasured).
		{"long partition, bare elector: no phantom", spec(rt300(model.ClientParams{MaxRetries: -1})), model.FaultSize{ReplyPartition: 20 * s}, 10700 * ms, 0, ""},
		// A shared pool retries on other pooled connections, each renewal
		// applying again; the call still ends T after the last one applied.
		{"shared pool", spec(rt300(model.ClientParams{SharedPool: true})), model.FaultSize{}, 10700 * ms, 0,
			"max(sent into the fault: max(0, TTL/2 + Wait - min(T, Cheal)) = max(0, 2.5s + 6s - 300ms) = 8.2s; reached Redis, reply lost: max(0, TTL + Wait - min(T, Cheal)) = max(0, 5s + 6s - 300ms) = 10.7s) = 10.7s"},
		// A partition that ends before the demoted leader's next acquire
		// (Cmin + Wait after it began) leaves no phantom lease.
		{"shared pool, short partition", spec(rt300(model.ClientParams{MaxRetries: -1, SharedPool: true})), model.FaultSize{ReplyPartition: 6 * s}, 10700 * ms, 0, ""},
		// A longer one lets that acquire's SET NX apply unseen over an idle
		// pooled connection: a phantom lease, again while the partition lasts.
		{"shared pool, long partition: phantom leases", spec(rt300(model.ClientParams{MaxRetries: -1, SharedPool: true})), model.FaultSize{ReplyPartition: 20 * s}, 30700 * ms, 0,
			"phantom leases: max(0, partition + TTL + Wait - T) = max(0, 20s + 5s + 6s - 300ms) = 30.7s"},
		{"shared pool, endless partition", spec(rt300(model.ClientParams{MaxRetries: -1, SharedPool: true})), model.FaultSize{ReplyPartition: model.Unbounded}, model.Unbounded, 0, ""},
		// the extension leaves an overlap only if the call outlasts a TTL
		{"short TTL", model.Params{TTL: 500 * ms, Wait: s, JitterMS: -1, Client: rt300(model.ClientParams{})}, model.FaultSize{}, 900 * ms, 160 * ms, ""},
		// a cold script cache: the renewal's NOSCRIPT is lost, nothing is
		// extended, and the leader believes TTL/2 + jitter + C after the key
		// was last set
		{"cold script cache", model.Params{}, model.FaultSize{ColdRenewal: true}, 1 * s, 7565 * ms, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := mustPredict(t, tt.p, model.ModePartitionReplies, tt.size)
			if pr.MaxGap != tt.gap || pr.MaxOverlap != tt.overlap {
				t.Errorf("gap %v overlap %v, want %v %v\n%s\n%s", pr.MaxGap, pr.MaxOverlap, tt.gap, tt.overlap, pr.GapFormula, pr.OverlapFormula)
			}
			if tt.gapFormula != "" && pr.GapFormula != tt.gapFormula {
				t.Errorf("gap formula %q, want %q", pr.GapFormula, tt.gapFormula)
			}
			if want := "the renewal applies, extending the key TTL from its send: max(0, C - TTL) = "; tt.size.ColdRenewal {
				if !strings.HasPrefix(pr.OverlapFormula, "cold script cache (EVALSHA's NOSCRIPT is lost, nothing extended): max(0, TTL/2 + jitter + C - TTL) = ") {
					t.Errorf("overlap formula %q", pr.OverlapFormula)
				}
			} else if !strings.HasPrefix(pr.OverlapFormula, want) {
				t.Errorf("overlap formula %q", pr.OverlapFormula)
			}
			if pr.Call != CallBound(tt.p, model.ModePartitionBlackhole) || pr.Call != CallBound(tt.p, model.ModePartitionReplies) {
				t.Errorf("call %v, want the blackhole's %v", pr.Call, CallBound(tt.p, model.ModePartitionBlackhole))
			}
			if !strings.Contains(pr.Note, "phantom") {
				t.Errorf("note lacks the phantom lease: %q", pr.Note)
			}
		})
	}
	// Against the blackhole: its renewal applies only when the partition
	// starts a hop after its send, the replies' always does; the worst
	// case is the same renewal, applied, with its reply lost.
	p := spec(rt300(model.ClientParams{MaxRetries: -1}))
	bh, rp := mustPredict(t, p, model.ModePartitionBlackhole, model.FaultSize{}), mustPredict(t, p, model.ModePartitionReplies, model.FaultSize{})
	if rp.MaxGap != bh.MaxGap || rp.MaxGap != 10700*ms {
		t.Errorf("replies gap %v vs blackhole gap %v: want both TTL + Wait - T = 10.7s", rp.MaxGap, bh.MaxGap)
	}
	if !slices.Contains(Modes, model.ModePartitionReplies) {
		t.Errorf("Modes lacks %s", model.ModePartitionReplies)
	}
}

// TestPredictLeaseLoss: a Redis restart takes the lease away for the
// downtime D too. Nobody can acquire until Redis is back, and an acquire
// that failed meanwhile waits Wait from its failure, which HELLO's retry
// backoffs delay past the last refused try: the gap grows with D. The
// overlap does not shrink by D in the bound (D is measured from above).
func TestPredictLeaseLoss(t *testing.T) {
	const ms, s = time.Millisecond, time.Second
	tests := []struct {
		name                       string
		p                          model.Params
		d                          time.Duration
		gap, overlap               time.Duration
		gapFormula, overlapFormula string
	}{
		{"defaults, downtime not given", model.Params{}, 0, 6170 * ms, 2535 * ms,
			"Wait + backoffs = 6s + 170ms = 6.17s",
			"max(TTL/2 + jitter + backoff(1), C) = max(2.5s + 5ms + 30ms, 680ms) = 2.535s"},
		{"defaults, 12ms restart", model.Params{}, 12 * ms, 6182 * ms, 2535 * ms,
			"D + Wait + backoffs = 12ms + 6s + 170ms = 6.182s", ""},
		{"defaults, 2s restart", model.Params{}, 2 * s, 8170 * ms, 2535 * ms, "", ""},
		{"no retries", model.Params{Client: model.ClientParams{MaxRetries: -1}}, 2 * s, 8 * s, 2505 * ms,
			"D + Wait = 2s + 6s = 8s",
			"max(TTL/2 + jitter, C) = max(2.5s + 5ms, 0s) = 2.505s"},
		// a renewal caught by the downtime retries like a reset, and can
		// end up to C after Redis is back, longer than TTL/2 here
		{"short TTL", model.Params{TTL: 500 * ms, Wait: s, JitterMS: -1}, 10 * ms, 1180 * ms, 680 * ms, "",
			"max(TTL/2 + jitter + backoff(1), C) = max(250ms + 0s + 30ms, 680ms) = 680ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := mustPredict(t, tt.p, model.ModeLeaseLoss, model.FaultSize{RedisDowntime: tt.d})
			if pr.MaxGap != tt.gap || pr.MaxOverlap != tt.overlap {
				t.Errorf("gap %v overlap %v, want %v %v\n%s\n%s", pr.MaxGap, pr.MaxOverlap, tt.gap, tt.overlap, pr.GapFormula, pr.OverlapFormula)
			}
			if tt.gapFormula != "" && pr.GapFormula != tt.gapFormula {
				t.Errorf("gap formula %q, want %q", pr.GapFormula, tt.gapFormula)
			}
			if tt.overlapFormula != "" && pr.OverlapFormula != tt.overlapFormula {
				t.Errorf("overlap formula %q, want %q", pr.OverlapFormula, tt.overlapFormula)
			}
			if pr.Call != CallBound(tt.p, model.ModePartitionReset) || !strings.Contains(pr.CallFormula, "reset") {
				t.Errorf("call %v %q, want the reset bound %v", pr.Call, pr.CallFormula, CallBound(tt.p, model.ModePartitionReset))
			}
		})
	}
}

// Safe mode: the guard removes the believed overlap of hung, failing and
// slow calls, at the price of up to a margin (and, under latency, 2L) more
// gap; a pause, drift and a lost key keep the spec's overlap.
func TestPredictSafeMode(t *testing.T) {
	spec := model.Params{}.WithDefaults()
	safe := spec
	safe.Safe = true
	size := model.FaultSize{Latency: 2 * time.Second, Pause: 8 * time.Second, ClockRate: 0.2}
	margin := 5*time.Second/100 + 2*time.Millisecond
	for _, tt := range []struct {
		mode    string
		overlap time.Duration // in safe mode; -1: as in spec mode
		gap     time.Duration // at least
	}{
		{model.ModePartitionBlackhole, 0, margin + spec.Wait},
		{model.ModePartitionReplies, 0, margin + spec.Wait},
		{model.ModeLatency, 0, margin + 4*time.Second + spec.Wait},
		{model.ModePause, -1, 0},
		{model.ModeClockDrift, -1, 0},
		{model.ModeLeaseLoss, -1, 0},
	} {
		sp, _ := PredictMode(spec, tt.mode, size)
		sf, _ := PredictMode(safe, tt.mode, size)
		want := tt.overlap
		if want < 0 {
			want = sp.MaxOverlap
		}
		if sf.MaxOverlap != want {
			t.Errorf("%s: safe overlap %v (%s), want %v (spec %v)", tt.mode, sf.MaxOverlap, sf.OverlapFormula, want, sp.MaxOverlap)
		}
		if sf.MaxGap < tt.gap || sf.MaxGap < sp.MaxGap {
			t.Errorf("%s: safe gap %v (%s), want at least %v and the spec's %v", tt.mode, sf.MaxGap, sf.GapFormula, tt.gap, sp.MaxGap)
		}
	}
}

// A failover keeps the lease while the replica's copy is alive at the
// promotion (A < TTL/2 - jitter) and the client retries the renewal the
// switch caught; otherwise it is a lease loss whose downtime is the switch.
func TestPredictFailover(t *testing.T) {
	const ms = time.Millisecond
	p := model.Params{} // spec: TTL 5s, jitter 5ms, go-redis defaults
	clean, _ := PredictMode(p, model.ModeFailover, model.FaultSize{Failover: 15 * ms})
	if clean.MaxGap != 0 || clean.MaxOverlap != 0 || !strings.Contains(clean.GapFormula, "A + backoff(1) = 15ms + 30ms < TTL/2 - jitter") {
		t.Errorf("clean failover: gap %v overlap %v (%s); want 0, 0", clean.MaxGap, clean.MaxOverlap, clean.GapFormula)
	}
	noRetry, _ := PredictMode(model.Params{Client: model.ClientParams{MaxRetries: -1}}, model.ModeFailover, model.FaultSize{Failover: 15 * ms})
	if noRetry.Note == "" || !strings.Contains(noRetry.Note, "no retries") {
		t.Errorf("clean failover without retries: note %q", noRetry.Note)
	}
	renewErr, _ := PredictMode(model.Params{Client: model.ClientParams{MaxRetries: -1}}, model.ModeRenewError, model.FaultSize{})
	if noRetry.MaxGap != renewErr.MaxGap || noRetry.MaxGap == 0 {
		t.Errorf("clean failover without retries: gap %v, want the renewal error's %v", noRetry.MaxGap, renewErr.MaxGap)
	}
	// A lossy failover loses the lease however short its lag: a renewal in
	// the lag is lost, and the key then expires 2 × jitter before the next.
	short, _ := PredictMode(p, model.ModeFailover, model.FaultSize{Failover: 210 * ms, FailoverLag: 200 * ms})
	if short.MaxOverlap == 0 {
		t.Errorf("lossy failover with a 200ms lag: overlap %v, want the lease-loss bound", short.MaxOverlap)
	}
	slow, _ := PredictMode(p, model.ModeFailover, model.FaultSize{Failover: 2480 * ms})
	if slow.MaxOverlap == 0 {
		t.Errorf("clean failover of 2.48s (+ backoff(1) > TTL/2 - jitter): overlap %v, want the lease-loss bound", slow.MaxOverlap)
	}
	lossy, _ := PredictMode(p, model.ModeFailover, model.FaultSize{Failover: 5010 * ms, FailoverLag: 5 * time.Second})
	restart, _ := PredictMode(p, model.ModeLeaseLoss, model.FaultSize{RedisDowntime: 10 * ms})
	if lossy.MaxOverlap != restart.MaxOverlap || lossy.MaxGap != restart.MaxGap {
		t.Errorf("lossy failover: gap %v overlap %v; want a lease loss with downtime S = 10ms: %v, %v", lossy.MaxGap, lossy.MaxOverlap, restart.MaxGap, restart.MaxOverlap)
	}
	if !strings.HasPrefix(lossy.GapFormula, "S + Wait") {
		t.Errorf("lossy gap formula %q, want S + Wait + backoffs", lossy.GapFormula)
	}
	unknown, _ := PredictMode(p, model.ModeFailover, model.FaultSize{})
	if unknown.MaxOverlap != restart.MaxOverlap {
		t.Errorf("failover of unknown duration: overlap %v, want the lossy worst case %v", unknown.MaxOverlap, restart.MaxOverlap)
	}
	safe, _ := PredictMode(model.Params{Safe: true}, model.ModeFailover, model.FaultSize{Failover: 5010 * ms, FailoverLag: 5 * time.Second})
	if safe.MaxOverlap != lossy.MaxOverlap || !strings.Contains(safe.Note, "fence") {
		t.Errorf("safe mode under a lossy failover: overlap %v (want %v, the guard cannot see a lost key); note %q", safe.MaxOverlap, lossy.MaxOverlap, safe.Note)
	}
}

// A ClusterClient's failing calls are not modelled: the modes that rest on
// them are unbounded (a "predicted" limit is unknown, not wrong); the others
// keep their bounds.
func TestPredictClusterClient(t *testing.T) {
	p := model.Params{Client: model.ClientParams{Cluster: true}}
	for _, m := range []string{model.ModePartitionBlackhole, model.ModePartitionRefuse, model.ModePartitionReset, model.ModePartitionReplies} {
		pr, _ := PredictMode(p, m, model.FaultSize{ReplyPartition: time.Second})
		if pr.Call != model.Unbounded || pr.MaxOverlap != model.Unbounded || !strings.Contains(pr.CallFormula, "ClusterClient") {
			t.Errorf("%s on a ClusterClient: call %v (%s), overlap %v; want unbounded", m, pr.Call, pr.CallFormula, pr.MaxOverlap)
		}
		// The gap and the failover rest on the calls too: a blackholed
		// cluster leader failed over in 12.38 s of the single client's 11 s.
		if pr.MaxGap != model.Unbounded || pr.MaxFailover != model.Unbounded || pr.MaxStale != model.Unbounded {
			t.Errorf("%s on a ClusterClient: gap %v (%s), failover %v, stale %v; want unbounded", m, pr.MaxGap, pr.GapFormula, pr.MaxFailover, pr.MaxStale)
		}
	}
	if g, _, ok := ComposeGap(p, []string{model.ModeLeaderCrash, model.ModeLatency}, model.FaultSize{Latency: time.Second}); !ok || g != model.Unbounded {
		t.Errorf("composed gap with latency on a ClusterClient: %v, want unbounded", g)
	}
	crash, _ := PredictMode(p, model.ModeLeaderCrash, model.FaultSize{})
	single, _ := PredictMode(model.Params{}, model.ModeLeaderCrash, model.FaultSize{})
	if crash.MaxGap != single.MaxGap {
		t.Errorf("leader crash on a ClusterClient: gap %v, want the single client's %v", crash.MaxGap, single.MaxGap)
	}
	if sc := (model.Scenario{Redis: model.RedisCluster}).WithDefaults(); !sc.Params.Client.Cluster {
		t.Error("WithDefaults does not mark a cluster scenario's client")
	}
}

// A later fault that starts within one's failover and a TTL, or while the
// earlier one still reaches, lengthens the earlier one's bound to its end;
// one that starts later does not.
func TestFailoverChain(t *testing.T) {
	p := model.Params{TTL: 5 * time.Second}
	s := time.Second
	cases := []struct {
		name             string
		at, reach, bound []time.Duration
		want             time.Duration
	}{
		{"one", []time.Duration{4 * s}, []time.Duration{5 * s}, []time.Duration{11 * s}, 11 * s},
		{"chained", []time.Duration{4 * s, 8 * s}, []time.Duration{5 * s, 9 * s}, []time.Duration{11 * s, 11 * s}, 15 * s},
		{"any order", []time.Duration{8 * s, 4 * s}, []time.Duration{9 * s, 5 * s}, []time.Duration{11 * s, 11 * s}, 15 * s},
		{"too late", []time.Duration{4 * s, 21 * s}, []time.Duration{5 * s, 22 * s}, []time.Duration{11 * s, 11 * s}, 11 * s},
		{"within reach", []time.Duration{0, 21 * s}, []time.Duration{30 * s, 22 * s}, []time.Duration{2 * s, 11 * s}, 32 * s},
		{"unbounded", []time.Duration{4 * s, 8 * s}, []time.Duration{5 * s, 9 * s}, []time.Duration{11 * s, model.Unbounded}, model.Unbounded},
	}
	for _, c := range cases {
		if got := FailoverChain(p, c.at, c.reach, c.bound); got != c.want {
			t.Errorf("%s: FailoverChain = %v, want %v", c.name, got, c.want)
		}
	}
}

// The failover bound counts the old leader's demotion: a hung renewal's
// TTL/2 + jitter + C, beyond TTL + Wait + jitter.
func TestFailoverBoundCountsDemotion(t *testing.T) {
	pr, _ := PredictMode(model.Params{}, model.ModePartitionBlackhole, model.FaultSize{})
	if want := 2500*time.Millisecond + 5*time.Millisecond + pr.Call + hop; pr.MaxFailover != want {
		t.Errorf("blackhole MaxFailover = %v (%s), want TTL/2 + jitter + C + hop = %v", pr.MaxFailover, pr.FailoverFormula, want)
	}
	pr, _ = PredictMode(model.Params{}, model.ModeClockDrift, model.FaultSize{ClockRate: 0.2, ClockFor: 14 * time.Second})
	if pr.MaxFailover < 14*time.Second || pr.MaxFailover > 14400*time.Millisecond {
		t.Errorf("clock-drift MaxFailover = %v (%s), want the heal-capped second renewal, ~14.33 s", pr.MaxFailover, pr.FailoverFormula)
	}
}

// Safe mode: an acquire whose round trip under latency outlasts its
// deadline (TTL - margin) is abandoned, yet lands: phantom leases while the
// latency lasts (TestRandomSchedulesKeepBounds, draw seed 8, measured a
// 3.664 s gap over the 3.579 s the bound gave before).
func TestSafeLatencyAcquirePhantom(t *testing.T) {
	p := model.Params{TTL: 1101 * time.Millisecond, Wait: 1609 * time.Millisecond, JitterMS: 3, Safe: true}
	p.Client.ReadTimeout, p.Client.MaxRetries = 3103*time.Millisecond, 2
	s := model.FaultSize{Latency: 1403 * time.Millisecond, LatencyRTT: 1403 * time.Millisecond, LatencyMinRTT: 1169 * time.Millisecond, LatencyFor: 7551 * time.Millisecond}
	pr, _ := PredictMode(p, model.ModeLatency, s)
	if want := s.LatencyFor + s.Latency + p.TTL + p.Wait; pr.MaxGap < want {
		t.Errorf("safe latency MaxGap = %v (%s), want D + L + TTL + Wait = %v", pr.MaxGap, pr.GapFormula, want)
	}
	// A round trip within the deadline leaves no phantom.
	s.Latency, s.LatencyRTT, s.LatencyMinRTT = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
	if pr, _ := PredictMode(p, model.ModeLatency, s); pr.MaxGap >= s.LatencyFor {
		t.Errorf("short latency MaxGap = %v (%s): a phantom where none can be", pr.MaxGap, pr.GapFormula)
	}
}

// A reset that heals within Wait (renew-blip, flapping-network) lets the
// demoted leader's own next attempt win: the gap is Wait (+ a hop), not
// TTL/2 + Wait; an unknown or longer reset keeps TTL/2 + Wait.
func TestShortResetGap(t *testing.T) {
	short, _ := PredictMode(model.Params{}, model.ModePartitionReset, model.FaultSize{ResetPartition: 2 * time.Second})
	if want := 6*time.Second + hop; short.MaxGap != want {
		t.Errorf("2 s reset: MaxGap = %v (%s), want Wait + hop = %v", short.MaxGap, short.GapFormula, want)
	}
	for _, r := range []time.Duration{0, 7 * time.Second, model.Unbounded} {
		if pr, _ := PredictMode(model.Params{}, model.ModePartitionReset, model.FaultSize{ResetPartition: r}); pr.MaxGap != 8500*time.Millisecond {
			t.Errorf("reset %v: MaxGap = %v (%s), want TTL/2 + Wait = 8.5s", r, pr.MaxGap, pr.GapFormula)
		}
	}
}

// Latency whose longest round trip still lets every warm renewal land
// before the expiry (the latency built-in: 800 ± 200 ms each way) cannot
// overlap or leave a gap; a cold renewal still can.
func TestLatencyWarmNoLapse(t *testing.T) {
	s := model.FaultSize{Latency: time.Second, LatencyRTT: 2 * time.Second, LatencyMinRTT: 1200 * time.Millisecond}
	if pr, _ := PredictMode(model.Params{}, model.ModeLatency, s); pr.MaxOverlap != 0 || pr.MaxGap != 0 {
		t.Errorf("warm 2 s round trips: overlap %v (%s), gap %v (%s), want 0 and 0", pr.MaxOverlap, pr.OverlapFormula, pr.MaxGap, pr.GapFormula)
	}
	s.ColdRenewal = true
	if pr, _ := PredictMode(model.Params{}, model.ModeLatency, s); pr.MaxOverlap == 0 {
		t.Errorf("cold renewal: overlap 0 (%s), want the cold case's 2R", pr.OverlapFormula)
	}
}

// BoundText is how every table and formula writes a bound: Unbounded as
// the word, any other bound exactly as time.Duration prints it.
func TestBoundText(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{model.Unbounded, "unbounded"},
		{model.Unbounded - 1, (model.Unbounded - 1).String()},
		{0, "0s"},
		{5500 * time.Millisecond, "5.5s"},
		{-time.Second, "-1s"},
	} {
		if got := BoundText(tt.d); got != tt.want {
			t.Errorf("BoundText(%d) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
