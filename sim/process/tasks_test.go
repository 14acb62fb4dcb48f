package process

import (
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/model"
)

// A task no line dispatched is a protocol error, unless a dispatch command
// was left unanswered because its agent was killed: that agent may have
// added the task to the stream and died before its task-dispatched line
// (leader-crash on the process backend, the leader killed mid-dispatch:
// "task-reclaimed of task …, which no agent dispatched" ended the run on a
// harness error). Then the task is dispatched by that agent at the
// command's time; each unanswered dispatch explains one task.
func TestUnansweredDispatchExplainsOneUnknownTask(t *testing.T) {
	read := func(lines ...string) *agent.Decoder {
		return agent.NewDecoder("i1", strings.NewReader(`{"type":"hello","protocol":1,"id":"b","key":"k","capabilities":["runner"]}`+"\n"+strings.Join(lines, "\n")+"\n"))
	}
	for _, unanswered := range []int{0, 1, 2} {
		var book taskBook
		dec := read(`{"type":"task-reclaimed","task":"t-lost"}`, `{"type":"task-completed","task":"t-lost"}`, `{"type":"task-completed","task":"t-other"}`)
		if _, err := dec.Hello(); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			e, err := dec.Next()
			if err != nil {
				t.Fatal(err)
			}
			book.note(dec, e)
		}
		for k := range unanswered {
			book.unansweredDispatch(model.Event{At: time.Duration(k+1) * time.Second, Kind: model.TaskDispatched, Instance: 0, ID: "a"})
		}
		tl := model.Timeline{{At: 500 * time.Millisecond, Kind: model.LeaderGained, Instance: 0, ID: "a"}, {At: 3 * time.Second, Kind: model.InstanceCrashed, Instance: 0, ID: "a"}}
		tl, errs := book.settle(tl)
		if want := 2 - min(unanswered, 2); len(errs) != want {
			t.Errorf("%d unanswered: errors %v, want %d", unanswered, errs, want)
		}
		var got []string
		for i, e := range tl {
			if i > 0 && e.At < tl[i-1].At {
				t.Errorf("%d unanswered: timeline out of order at %d: %+v", unanswered, i, tl)
			}
			if e.Kind == model.TaskDispatched {
				got = append(got, e.Task)
			}
		}
		if want := []string{"t-lost", "t-other"}[:min(unanswered, 2)]; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%d unanswered: dispatched %v, want %v", unanswered, got, want)
		}
	}
}
