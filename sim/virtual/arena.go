package virtual

import "sync"

// arenaChunk is how many calls, or runner commands, an arena allocates at
// once.
const arenaChunk = 256

// arena holds a run's calls and runner commands, which nothing outside the
// run keeps (the timeline holds only their strings): a runner-mode run
// makes ~1,400 of each, ~650 KB that the garbage collector had to
// reclaim run after run; an arena is reused by the next run instead
// (BenchmarkLeaderCrashModes).
type arena struct {
	calls [][]call
	cmds  [][]rcmd
	nc    int // calls handed out
	nm    int // commands handed out
}

var arenas = sync.Pool{New: func() any { return new(arena) }}

// call returns a zeroed call.
func (a *arena) call() *call {
	if a.nc == len(a.calls)*arenaChunk {
		a.calls = append(a.calls, make([]call, arenaChunk))
	}
	c := &a.calls[a.nc/arenaChunk][a.nc%arenaChunk]
	a.nc++
	return c
}

// cmd returns a copy of v that lives as long as the run.
func (a *arena) cmd(v rcmd) *rcmd {
	if a.nm == len(a.cmds)*arenaChunk {
		a.cmds = append(a.cmds, make([]rcmd, arenaChunk))
	}
	c := &a.cmds[a.nm/arenaChunk][a.nm%arenaChunk]
	a.nm++
	*c = v
	return c
}

// release zeroes what the run used and hands the arena to the next run;
// nothing of the run may point into it afterwards.
func (a *arena) release() {
	for i := 0; i*arenaChunk < a.nc; i++ {
		clear(a.calls[i][:min(arenaChunk, a.nc-i*arenaChunk)])
	}
	for i := 0; i*arenaChunk < a.nm; i++ {
		clear(a.cmds[i][:min(arenaChunk, a.nm-i*arenaChunk)])
	}
	a.nc, a.nm = 0, 0
	arenas.Put(a)
}
