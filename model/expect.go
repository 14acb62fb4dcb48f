package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Metric names one measured quantity of a run, as scenario files, flags
// and result.json write it ("max_overlap"); Metrics lists them all. A
// Check's Metric may also be ClaimMetric(name), a check of a spec claim.
type Metric string

// ClaimMetric is the Metric of the check a run makes of the spec claim
// name (ClaimGap, ClaimSplitBrain in model/analysis), "claim <name>": not
// one of Metrics.
func ClaimMetric(name string) Metric { return Metric("claim " + name) }

// The metrics, one per thing a run measures (Metrics says what each is).
const (
	MetricMaxGap          Metric = "max_gap"
	MetricMaxOverlap      Metric = "max_overlap"
	MetricTotalOverlap    Metric = "total_overlap"
	MetricFailover        Metric = "failover"
	MetricHealToStable    Metric = "heal_to_stable"
	MetricStaleLeadership Metric = "stale_leadership"
	MetricOverlapWindows  Metric = "overlap_windows"
	MetricGaps            Metric = "gaps"
	MetricLeaderChanges   Metric = "leader_changes"
	MetricElectorErrors   Metric = "elector_errors"
	MetricLostTasks       Metric = "lost_tasks"
	MetricUnfinishedTasks Metric = "unfinished_tasks"
	MetricDeadTasks       Metric = "dead_tasks"
	MetricDuplicateTasks  Metric = "duplicate_tasks"
	MetricDuplicateChores Metric = "duplicate_chores"
	MetricStaleChores     Metric = "stale_chores"
	MetricFencedChores    Metric = "fenced_chores"
)

// Expectation is one limit a run must keep: Metric must not exceed Max
// and must reach Min. At least one of them is given; Min == Max asks for
// exactly that value (e.g. "exactly one overlap window": a finding that a
// change hiding it would make fail).
type Expectation struct {
	// Metric is one of Metrics.
	Metric Metric `json:"metric"`
	// Max is the upper limit: a count for count metrics; for durations a Go
	// duration ("11s"), an expression over the run's parameters
	// ("ttl + wait + 250ms", "2*ttl", "ttl/2 + read_timeout*2"), or
	// "predicted" (the bound calculator's prediction for the faults the run
	// applied, plus Slack). "" for none.
	Max string `json:"max,omitempty"`
	// Min is the lower limit, a count or a duration expression; "" for none.
	Min string `json:"min,omitempty"`
	// Slack is added to a "predicted" limit. Default DefaultSlack (250ms, not scaled).
	Slack time.Duration `json:"slack,omitempty"`
	// Line is where the expectation was written (for error messages); 0 if unknown.
	Line int `json:"line,omitempty"`
}

// Metrics lists the metrics an expectation can limit, with what they measure.
var Metrics = map[Metric]string{
	MetricMaxGap:          "the longest interval with no believed leader after the first election (duration)",
	MetricMaxOverlap:      "the longest interval with two or more believed leaders (duration)",
	MetricTotalOverlap:    "the summed length of all overlap windows (duration)",
	MetricFailover:        "the longest time from a fault's injection to the next stable leader (duration)",
	MetricHealToStable:    "the longest time from a fault's heal to a stable leader (duration)",
	MetricStaleLeadership: "the longest interval an instance believed it led while Redis held another value (duration)",
	MetricOverlapWindows:  "how many overlap windows (count)",
	MetricGaps:            "how many leadership gaps (count)",
	MetricLeaderChanges:   "how many times leadership was gained (count)",
	MetricElectorErrors:   "how many elector errors (count)",
	MetricLostTasks:       "dispatched tasks never completed and no longer in Redis at the end (count)",
	MetricUnfinishedTasks: "dispatched tasks not completed but still in Redis at the end, to run: late, not lost (count)",
	MetricDeadTasks:       "dispatched tasks not completed and dead-lettered (failed with no retries left): not lost (count)",
	MetricDuplicateTasks:  "tasks reported completed more than once; a maximum only at-least-once redeliveries (an extra completion after a reclaim) exceed is unknown (count)",
	MetricDuplicateChores: "the same chore run by two instances within one chore interval (count)",
	MetricStaleChores:     "chore runs that landed while the lease key held another id: a stale leader's writes (count)",
	MetricFencedChores:    "chores whose writes the safe mode's fence refused (count)",
}

// CountMetric reports whether the metric is a count rather than a duration.
func CountMetric(m Metric) bool {
	return strings.Contains(Metrics[m], "(count)")
}

// paramValues are the names an expression may use.
func paramValues(p Params) map[string]time.Duration {
	return map[string]time.Duration{
		"ttl":           p.TTL,
		"wait":          p.Wait,
		"jitter":        p.Jitter(),
		"op_timeout":    p.OpTimeout,
		"read_timeout":  p.Client.ReadTimeout,
		"write_timeout": p.Client.WriteTimeout,
		"dial_timeout":  p.Client.DialTimeout,
		"chore":         p.ChoreInterval,
	}
}

// ExprNames lists the parameter names EvalDuration knows.
func ExprNames() []string {
	return []string{"ttl", "wait", "jitter", "op_timeout", "read_timeout", "write_timeout", "dial_timeout", "chore"}
}

// EvalDuration evaluates a duration expression: terms joined by + and -,
// each a Go duration ("250ms"), a parameter name, or a product/quotient of
// those with plain numbers ("2*ttl", "ttl/2", "1.5*wait").
func EvalDuration(expr string, p Params) (time.Duration, error) {
	vals := paramValues(p)
	toks, err := tokenize(expr)
	if err != nil {
		return 0, err
	}
	if len(toks) == 0 {
		return 0, fmt.Errorf("empty expression")
	}
	var total float64
	sign := 1.0
	i := 0
	for {
		// term := factor {(*|/) factor}
		v, isDur, err := factor(toks, &i, vals)
		if err != nil {
			return 0, err
		}
		for i < len(toks) && (toks[i] == "*" || toks[i] == "/") {
			op := toks[i]
			i++
			w, wDur, err := factor(toks, &i, vals)
			if err != nil {
				return 0, err
			}
			switch {
			case op == "*" && isDur && wDur:
				return 0, fmt.Errorf("cannot multiply two durations in %q", expr)
			case op == "*":
				v *= w
				isDur = isDur || wDur
			case wDur:
				return 0, fmt.Errorf("cannot divide by a duration in %q", expr)
			case w == 0:
				return 0, fmt.Errorf("division by zero in %q", expr)
			default:
				v /= w
			}
		}
		if !isDur {
			return 0, fmt.Errorf("%q: a term is a plain number; durations need a unit (e.g. 250ms) or a parameter (%s)", expr, strings.Join(ExprNames(), ", "))
		}
		total += sign * v
		if i == len(toks) {
			break
		}
		switch toks[i] {
		case "+":
			sign = 1
		case "-":
			sign = -1
		default:
			return 0, fmt.Errorf("unexpected %q in %q", toks[i], expr)
		}
		i++
		if i == len(toks) {
			return 0, fmt.Errorf("%q ends with an operator", expr)
		}
	}
	if math.IsNaN(total) || total >= math.MaxInt64 || total <= math.MinInt64 {
		return 0, fmt.Errorf("%q overflows a duration (about ±292 years)", expr)
	}
	return time.Duration(total), nil
}

func factor(toks []string, i *int, vals map[string]time.Duration) (float64, bool, error) {
	if *i >= len(toks) {
		return 0, false, fmt.Errorf("missing operand")
	}
	t := toks[*i]
	*i++
	if v, ok := vals[t]; ok {
		return float64(v), true, nil
	}
	// A plain number before a duration: "0" parses as both, and in
	// "ttl/0" it is the number zero, not a duration.
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return f, false, nil
	}
	if d, err := time.ParseDuration(t); err == nil {
		return float64(d), true, nil
	}
	return 0, false, fmt.Errorf("unknown term %q: want a duration like 250ms, a number, or one of %s", t, strings.Join(ExprNames(), ", "))
}

func tokenize(s string) ([]string, error) {
	var toks []string
	cur := strings.Builder{}
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			flush()
		case r == '+' || r == '*' || r == '/' || r == '-':
			flush()
			toks = append(toks, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == 'µ':
			cur.WriteRune(r)
		default:
			return nil, fmt.Errorf("unexpected character %q in %q", r, s)
		}
	}
	flush()
	return toks, nil
}

// JoinMetrics writes ms as strings.Join writes strings, sep between them.
func JoinMetrics(ms []Metric, sep string) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = string(m)
	}
	return strings.Join(s, sep)
}
