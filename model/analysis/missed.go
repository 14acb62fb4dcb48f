package analysis

import (
	"github.com/leaselab/leaselab/model"

	"fmt"
	"strings"
	"time"
)

// A fault is about what it does to the leader it hits: a partition fails
// the renewal it catches, a long pause or a slow link lets the key lapse.
// A fault that hit a leader and caused none of that — no demotion, no
// election error, no lapse of its key while it reached — created nothing
// its checks are about: renew-blip's 0.6 s reset at time scale 0.3,
// which go-redis's retries (their backoffs do not scale) outlasted,
// passed "4 of 4" on gaps and overlaps that were never at risk. Such a
// fault makes the run's passing checks unknown, as a skipped one makes
// the run unknown, unless it may miss (Fault.AllowSkipped).

// Effects a fault may have on a hit leader that kept believing through it
// (FaultOutcome.Effect; one that demoted has a Demotion).
const (
	EffectError = "an election error of the hit leader"
	EffectLapse = "the hit leader's key lapsed while it believed"
)

// faultEffects sets the Effect of each fault whose hit leader kept
// believing: what it caused on that leader between its injection and its
// reach.
func faultEffects(faults []model.FaultOutcome, ev []model.Event, redis RedisLane) {
	for i := range faults {
		o := &faults[i]
		if !o.LeaderHit || o.Demotion != nil {
			continue
		}
		hit := map[int]bool{}
		for _, m := range o.LeadersAtInjection {
			if o.Hits(m.Instance) {
				hit[m.Instance] = true
			}
		}
		for _, e := range ev {
			if e.At >= o.Reach {
				break
			}
			if e.Kind == model.ElectorError && e.At >= o.Applied && hit[e.Instance] {
				o.Effect = EffectError
				break
			}
		}
		if o.Effect != "" {
			continue
		}
		for _, s := range redis.Stale {
			if hit[s.Instance] && o.Touches(s.Window) {
				o.Effect = EffectLapse
				break
			}
		}
	}
}

// meantToFail reports whether a fault must fail the leader it hits,
// whatever the phase it lands in: a partition or a renewal error fails any
// renewal it catches (and one shorter than the renewal interval that
// caught none, or whose retries outlasted it, created nothing its checks
// are about: renew-blip's case); a pause must let the key lapse only if
// it outlasts the TTL (the leader's clock runs on: a renewal due during it
// fires at the resume), a suspend only if it outlasts TTL/2 (its clock
// stops: the renewal due comes P late). A slow link or clock, a crash or
// a stop, and a fault on Redis are left out: whether they must cause a
// lapse depends on more than the fault (and a crash or stop always ends
// the belief).
func meantToFail(f model.FaultOutcome, p model.Params) bool {
	switch f.Mode {
	case model.ModePartitionBlackhole, model.ModePartitionRefuse, model.ModePartitionReset, model.ModePartitionReplies, model.ModeRenewError:
		return true
	case model.ModePause:
		return !f.Open && f.Healed-f.Applied > p.TTL
	case model.ModeSuspend:
		return !f.Open && f.Healed-f.Applied > p.TTL-p.TTL/2
	}
	return false
}

// MissedFaults returns, for each fault that hit a leader, was meant to fail
// it and caused nothing, why the run's checks cannot tell. Without a Redis
// lane a lapse cannot be seen, so nothing is said to be missed.
func MissedFaults(sc model.Scenario, a Analysis) []string {
	if !a.Redis.Observed {
		return nil
	}
	var out []string
	for _, f := range a.Faults {
		if !f.LeaderHit || f.Demotion != nil || f.Effect != "" || !meantToFail(f, sc.Params) {
			continue
		}
		if f.ID >= 0 && f.ID < len(sc.Faults) && sc.Faults[f.ID].AllowSkipped {
			continue
		}
		why := fmt.Sprintf("fault %d (%s) hit the leader at %v and caused nothing it is about (no demotion, no election error, no lapse of its key by %v): the run never created the situation its checks judge (allow_skipped: true accepts this)",
			f.ID, faultName(f), f.Applied.Round(time.Millisecond), f.Reach.Round(time.Millisecond))
		// A renewal a loaded machine moved (a late timer, a slow retry)
		// may have missed the fault: the stall is the likelier cause.
		if late, n, worst := Stalled(a.Stalls, f.Applied-sc.Params.TTL, f.Reach); worst != nil {
			why += fmt.Sprintf("; the machine was loaded meanwhile (%s)", StallText(late, n, worst))
		}
		out = append(out, why)
	}
	return out
}

// faultName is a fault's kind, with its failure mode where the kind has
// several (a partition's: "partition refuse").
func faultName(f model.FaultOutcome) string {
	if len(model.KindSpecOf(model.FaultKind(f.Kind)).Modes) > 1 && f.Mode != "" {
		return f.Kind + " " + strings.TrimPrefix(f.Mode, f.Kind+"-")
	}
	return f.Kind
}

// JoinDetail appends more to a check's detail.
func JoinDetail(detail, more string) string {
	if detail == "" {
		return more
	}
	return detail + "; " + more
}
