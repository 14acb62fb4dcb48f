package analysis

import (
	"github.com/leaselab/leaselab/model"

	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Identity is what the run's lease values say about its instances. An
// instance is its index and its incarnation (each start at an index), and
// the analysis is keyed by incarnation; the value an incarnation announces
// (the id of its hello, InstanceStarted's ID) is the one it must write
// into the key, and a value may repeat across incarnations (a pod or host
// name, stable across restarts) and across instances. Two live
// incarnations announcing one value, or a key holding a value that nobody
// announced, leave who held the key unknown: the Redis lane says unknown
// there rather than stale (RedisLane.Unknown), and the checks that read it
// are unknown unless they fail anyway.
type Identity struct {
	// Shared are the values announced by two or more incarnations live at
	// the same time, in order of first announcement.
	Shared []SharedID `json:"shared,omitempty"`
	// Unannounced are the values the key held that no incarnation
	// announced, in order of first holding: an agent's hello id must be
	// the value it writes.
	Unannounced []UnannouncedValue `json:"unannounced,omitempty"`
}

// SharedID is one lease value announced by incarnations of two or more
// instances that were live at the same time (a time-seeded id drawn by
// electors started together, a copy-pasted name).
type SharedID struct {
	Value string `json:"value"`
	// Instances are the indexes that announced it, in order.
	Instances []int `json:"instances"`
	// Live are the windows in which two or more of them were live at once.
	Live []model.Window `json:"live"`
	// Held is how long the key held the value in those windows: which of
	// them held it cannot be told then.
	Held time.Duration `json:"held,omitempty"`
	// Overlap is how long two or more of them believed they led at once:
	// beliefs are per incarnation, so this is measured, unlike Held.
	Overlap time.Duration `json:"overlap,omitempty"`
	// Unjudged is how long their leadership (summed over them) could not
	// be judged against the key because the key held the shared value
	// (RedisLane.Unknown).
	Unjudged time.Duration `json:"unjudged,omitempty"`
}

// UnannouncedValue is a value the key held that no incarnation announced
// (a lock library's fresh random value per acquire, say): whose lease it
// was cannot be told.
type UnannouncedValue struct {
	Value string `json:"value"`
	// Held is how long the key held it in all.
	Held time.Duration `json:"held"`
	// Unjudged is how long leadership (summed over the believers) could
	// not be judged against the key because the key held it.
	Unjudged time.Duration `json:"unjudged,omitempty"`
}

// Findings says what the shared and unannounced values were and what they
// caused, one sentence each.
func (id Identity) Findings() []string {
	var out []string
	for _, s := range id.Shared {
		var live time.Duration
		for _, w := range s.Live {
			live += w.Duration
		}
		f := fmt.Sprintf("instances %s announced one lease value, %q, while live together (%v in all, from %v)",
			indexes(s.Instances), s.Value, round(live), round(s.Live[0].Start))
		if s.Held > 0 {
			f += fmt.Sprintf(": the key held it for %v of that, and which of them held it cannot be told, so who held the key and their stale leadership are unknown there (%v of leadership unjudged)", round(s.Held), round(s.Unjudged))
		} else {
			f += ": the key never held it meanwhile"
		}
		if s.Overlap > 0 {
			f += fmt.Sprintf("; two or more of them believed they led at once for %v (the overlaps, measured per incarnation)", round(s.Overlap))
		}
		out = append(out, f+". Each instance must announce and write its own value.")
	}
	if len(id.Unannounced) > 0 {
		var vals []string
		var held, unjudged time.Duration
		for _, u := range id.Unannounced {
			vals = append(vals, fmt.Sprintf("%q", u.Value))
			held, unjudged = held+u.Held, unjudged+u.Unjudged
		}
		if len(vals) > 3 {
			vals = append(vals[:3], fmt.Sprintf("and %d more", len(vals)-3))
		}
		out = append(out, fmt.Sprintf("the key held values no agent announced (%s) for %v in all: an agent's hello id must be the value it writes; "+
			"whose lease they were cannot be told, so stale leadership is unknown while an agent led and the key held one (%v of leadership unjudged)",
			strings.Join(vals, ", "), round(held), round(unjudged)))
	}
	return out
}

// Cause is the short reason a check that reads the key's holder is unknown.
func (id Identity) Cause() string {
	var parts []string
	for _, s := range id.Shared {
		parts = append(parts, fmt.Sprintf("instances %s announced one value, %q, while live together", indexes(s.Instances), s.Value))
	}
	if n := len(id.Unannounced); n > 0 {
		parts = append(parts, fmt.Sprintf("the key held %d value(s) no agent announced (an agent's hello id must be the value it writes)", n))
	}
	if len(parts) == 0 {
		return "the key's value could not be told apart"
	}
	return strings.Join(parts, "; ")
}

func indexes(is []int) string {
	s := make([]string, len(is))
	for k, i := range is {
		s[k] = strconv.Itoa(i)
	}
	if len(s) > 1 {
		return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
	}
	return strings.Join(s, "")
}

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// sumWindows is the windows' total length, for a check's detail.
func sumWindows(ws []Stale) string {
	var d time.Duration
	for _, w := range ws {
		d += w.Duration
	}
	return fmt.Sprintf("%v in all", round(d))
}

// incarnation is one start of an instance, live from its start to its
// crash or stop, the next start at its index, or the run's end.
type incarnation struct {
	model.Member
	live model.Window
}

// incarnationsOf lists the run's incarnations in order of start. An
// incarnation begins at its InstanceStarted, or, in a timeline without
// one (a fleet observed from outside), at the first event of an id not
// yet seen at its index; a later event of an id seen there before (a late
// line of an earlier incarnation) begins none.
func incarnationsOf(ev []model.Event, end time.Duration) []incarnation {
	var out []incarnation
	cur := map[int]int{}            // index → position in out of its live incarnation
	seen := map[model.Member]bool{} // every (index, id) that began one
	finish := func(i int, at time.Duration) {
		if k, ok := cur[i]; ok {
			out[k].live = NewWindow(out[k].live.Start, at, false)
			delete(cur, i)
		}
	}
	for _, e := range ev {
		if e.Instance < 0 || e.ID == "" {
			continue
		}
		m := model.Member{Instance: e.Instance, ID: e.ID}
		switch {
		case e.Kind == model.InstanceStarted:
			finish(e.Instance, e.At)
		case seen[m]:
			if k, ok := cur[e.Instance]; ok && out[k].ID == e.ID && (e.Kind == model.InstanceCrashed || e.Kind == model.InstanceStopped) {
				finish(e.Instance, e.At)
			}
			continue
		default:
			finish(e.Instance, e.At) // another id at a live index: a start unrecorded
		}
		seen[m] = true
		cur[e.Instance] = len(out)
		out = append(out, incarnation{Member: m, live: model.Window{Start: e.At}})
		if e.Kind == model.InstanceCrashed || e.Kind == model.InstanceStopped {
			finish(e.Instance, e.At)
		}
	}
	for _, k := range cur {
		out[k].live = NewWindow(out[k].live.Start, end, true)
	}
	return out
}

// sharedIDs finds the values announced by incarnations of two or more
// instances live at once, with the windows in which they were.
func sharedIDs(incs []incarnation) []SharedID {
	byValue := map[string][]incarnation{}
	var order []string
	for _, in := range incs {
		if _, ok := byValue[in.ID]; !ok {
			order = append(order, in.ID)
		}
		byValue[in.ID] = append(byValue[in.ID], in)
	}
	var out []SharedID
	for _, v := range order {
		group := byValue[v]
		if len(group) < 2 {
			continue
		}
		type edge struct {
			at    time.Duration
			delta int
			i     int
		}
		var edges []edge
		for _, in := range group {
			edges = append(edges, edge{in.live.Start, +1, in.Instance}, edge{in.live.End, -1, in.Instance})
		}
		// Ends before starts at one instant: a restart at one index is
		// never live twice.
		slices.SortFunc(edges, func(x, y edge) int { return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.delta, y.delta)) })
		s := SharedID{Value: v}
		live, from := map[int]int{}, time.Duration(0)
		for _, e := range edges {
			before := len(live)
			live[e.i] += e.delta
			if live[e.i] == 0 {
				delete(live, e.i)
			}
			switch {
			case before < 2 && len(live) >= 2:
				from = e.at
			case before >= 2 && len(live) < 2 && e.at > from:
				s.Live = append(s.Live, NewWindow(from, e.at, false))
			}
			if len(live) >= 2 {
				for i := range live {
					if !slices.Contains(s.Instances, i) {
						s.Instances = append(s.Instances, i)
					}
				}
			}
		}
		if len(s.Live) == 0 {
			continue
		}
		for _, in := range group {
			if in.live.Open && in.live.End == s.Live[len(s.Live)-1].End {
				s.Live[len(s.Live)-1].Open = true
			}
		}
		slices.Sort(s.Instances)
		out = append(out, s)
	}
	return out
}

// identityOf names the shared and unannounced values of a run from its
// incarnations, the Redis lane and the overlaps of beliefs.
func identityOf(shared []SharedID, lane RedisLane, overlaps []Overlap) Identity {
	id := Identity{Shared: slices.Clone(shared)}
	for i := range id.Shared {
		s := &id.Shared[i]
		for _, u := range lane.Unknown {
			if u.Holder == s.Value && u.ID == s.Value {
				s.Unjudged += u.Duration
			}
		}
		for _, h := range lane.Holders {
			if h.Shared && h.Holder == s.Value {
				s.Held += h.Duration
			}
		}
		for _, o := range overlaps {
			n := 0
			for _, m := range o.Leaders {
				if m.ID == s.Value && slices.Contains(s.Instances, m.Instance) {
					n++
				}
			}
			if n >= 2 {
				s.Overlap += o.Duration
			}
		}
	}
	pos := map[string]int{}
	for _, h := range lane.Holders {
		if !h.Unannounced {
			continue
		}
		k, ok := pos[h.Holder]
		if !ok {
			k = len(id.Unannounced)
			pos[h.Holder] = k
			id.Unannounced = append(id.Unannounced, UnannouncedValue{Value: h.Holder})
		}
		id.Unannounced[k].Held += h.Duration
	}
	for _, u := range lane.Unknown {
		if k, ok := pos[u.Holder]; ok {
			id.Unannounced[k].Unjudged += u.Duration
		}
	}
	return id
}
