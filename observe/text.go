package observe

import (
	"fmt"
	"strings"
	"time"
)

// Line is the watch's status as one line: who leads, who holds the key,
// what was read, on which node.
func (p Progress) Line() string {
	leaders := "none"
	if len(p.Leaders) > 0 {
		ids := make([]string, len(p.Leaders))
		for i, l := range p.Leaders {
			ids[i] = short(l)
		}
		leaders = strings.Join(ids, ",")
	}
	holder := "none"
	if p.Holder != "" {
		holder = short(p.Holder)
	}
	line := fmt.Sprintf("observe %s  leaders %s  key held by %s  instances %d  entries %d (late %d)  lane %s  on %s",
		p.Elapsed.Round(time.Second), leaders, holder, p.Instances, p.Entries, p.Late, p.Lane, p.Node)
	if p.Dropped > 0 {
		line += fmt.Sprintf("  dropped %d unreadable", p.Dropped)
	}
	if p.Switches > 0 {
		line += fmt.Sprintf(" (after %d failover(s))", p.Switches)
	}
	return line
}

// Lines say what the watch follows: the lease, its stream, the source and
// lane, the resolution, and how it follows a failover.
func (h Header) Lines() []string {
	group := h.Group
	if group == "" {
		group = h.Key
	}
	lines := []string{fmt.Sprintf("observing %s (key %s, stream %s) on %s: lane %s, resolution %s",
		group, h.Key, h.Stream, h.Source, h.Lane, h.Resolution)}
	if h.LaneNote != "" {
		lines = append(lines, "  "+h.LaneNote)
	}
	return append(lines, "  failover: "+h.Failover)
}

// Line says where the watch moved and what it could not see meanwhile;
// start is the watch's (Header.Start).
func (s Switch) Line(start time.Time) string {
	return fmt.Sprintf("failover at %s: now following %s (was %s; %s); the lease key was not seen for %s, lane %s",
		s.At.Sub(start).Round(time.Millisecond), s.To, s.From, s.Why, s.At.Sub(s.LastSeen).Round(100*time.Microsecond), s.Lane)
}
