package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The in-flight registry: which deliveries are held here, from their
// delivery until their outcome is settled in Redis (read ahead, running, or
// finished with the acknowledgement, retry or dead letter on its way). It
// lets a graceful Stop hand back what did not finish in time, and keeps the
// fetcher from starting a second copy of an entry this instance still holds:
// its own XAUTOCLAIM pass returns any entry pending under it for ClaimIdle,
// one whose acknowledgement is slow too.

// track registers ds as held here and returns those that were not already:
// ds filtered in place. claimed says ds is what an XAUTOCLAIM pass returned
// (claimBegin): then an entry settled here while the pass was on the wire is
// dropped too, and the pass's window ends. Redis ran the pass before that
// entry's acknowledgement (or the pass would not have returned it), but the
// acknowledgement's answer came first: the entry is finished, not to run.
func (r *Runner) track(ds []*delivery, claimed bool) []*delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := ds[:0]
	for _, d := range ds {
		if _, ok := r.flights[d.entry]; ok {
			continue
		}
		if _, ok := r.lateSettled[d.entry]; ok && claimed {
			continue
		}
		r.flights[d.entry] = d
		out = append(out, d)
	}
	if claimed {
		r.claimEndLocked()
	}
	return out
}

// claimBegin opens an XAUTOCLAIM pass's window: from now until its reply is
// registered (track) or found empty or failed (claimEnd), settled records
// the entries it settles, which the reply may still return. What an earlier
// window recorded is forgotten: that pass's reply was handled.
func (r *Runner) claimBegin() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claiming = true
	clear(r.lateSettled)
}

// claimEnd closes the window of a pass that returned nothing or failed.
func (r *Runner) claimEnd() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claimEndLocked()
}

func (r *Runner) claimEndLocked() {
	r.claiming = false
	clear(r.lateSettled)
}

// tracked reports whether d is still registered: false once a graceful Stop
// took it to hand it back.
func (r *Runner) tracked(d *delivery) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flights[d.entry] == d
}

// untrack unregisters entry.
func (r *Runner) untrack(entry string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.flights, entry)
}

// settling marks d, which ran here, as being settled: it stays registered
// until its outcome is in Redis (settled). False if a graceful Stop took it
// to hand it back, in which case the worker must not settle it.
func (r *Runner) settling(d *delivery) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.flights[d.entry] != d {
		return false
	}
	d.settling = true
	return true
}

// settled unregisters deliveries whose outcome was written (or given up on:
// an entry still pending then is reclaimed after ClaimIdle, as it should be).
func (r *Runner) settled(ds ...*delivery) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range ds {
		if r.flights[d.entry] == d {
			delete(r.flights, d.entry)
			if r.claiming {
				r.lateSettled[d.entry] = struct{}{}
			}
		}
	}
}

// handBackAll takes every delivery held here and not finished (running, or
// read ahead and not started) from its worker and returns it to the stream
// for any instance to run. One that is settling finished: its outcome is on
// its way (Stop flushes the acknowledgements after this).
func (r *Runner) handBackAll(ctx context.Context) error {
	r.mu.Lock()
	var ds []*delivery
	for entry, d := range r.flights {
		if d.settling {
			continue
		}
		ds = append(ds, d)
		delete(r.flights, entry)
	}
	r.mu.Unlock()
	// In stream order, so the copies keep the order the tasks were
	// dispatched in.
	slices.SortFunc(ds, func(a, b *delivery) int { return compareEntryIDs(a.entry, b.entry) })
	var errs []error
	for _, d := range ds {
		acked, err := handBackScript.Run(ctx, r.rdb, []string{r.keys.stream},
			r.cfg.Group, d.entry, d.id, d.task, d.payload, d.attempt).Int64()
		if err != nil {
			// Still pending under this consumer: reclaimed after ClaimIdle.
			errs = append(errs, fmt.Errorf("runner: stop: handing back task %s (%s): %w", d.id, d.task, err))
			continue
		}
		if acked == 1 {
			r.stats.handedBack.Add(1)
			r.emit(Event{Kind: EventTaskHandedBack, TaskID: d.id, Task: d.task, Attempt: d.attempt})
		}
	}
	return errors.Join(errs...)
}

// compareEntryIDs orders two stream entry IDs ("ms-seq") as Redis does:
// by milliseconds, then by sequence, both as numbers.
func compareEntryIDs(a, b string) int {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	byNumber := func(x, y string) int {
		if c := cmp.Compare(len(x), len(y)); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	}
	if c := byNumber(am, bm); c != 0 {
		return c
	}
	return byNumber(as, bs)
}
