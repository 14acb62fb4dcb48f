// Command scoreboard runs leaselab's built-in scenarios on the process
// backend against several Redis-lease libraries, each as an agent, and
// writes one Markdown table: each built-in × each library, its verdict,
// max gap, max overlap and stale leadership (docs/scoreboard.md).
//
//	cd examples/scoreboard && go run ./cmd/scoreboard -o ../../docs/scoreboard.md
//
// It builds chaos from the repository and the library agents from this
// module, then runs `chaos suite --backend process` once per library, one
// library at a time, and reads each suite's summary.md.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Library is one column of the scoreboard: a name and the agent command
// (built from bin, the directory the build went to, and root, the
// repository). A nil Agent runs leaselab's own `chaos agent`.
type Library struct {
	Name  string
	About string
	Agent func(bin, root string) []string
}

// runSuite runs l's suite and reads its summary.
func runSuite(ctx context.Context, c Config, l Library, bin, root string) ([]row, error) {
	dir := filepath.Join(c.Out, l.Name)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	args := []string{"suite", "--backend", "process", "--time-scale", fmt.Sprint(c.TimeScale),
		"--parallel", fmt.Sprint(c.Parallel), "--seed", fmt.Sprint(c.Seed), "--out", dir, "--quiet"}
	if l.Agent != nil {
		args = append(args, "--agent", strings.Join(l.Agent(bin, root), " "))
	}
	args = append(args, c.Scenarios...)
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "chaos"), args...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = c.Log, c.Log
	fmt.Fprintf(c.Log, "scoreboard: %s: chaos %s\n", l.Name, strings.Join(args, " "))
	// A suite with a failed scenario exits non-zero: its summary says so.
	var ee *exec.ExitError
	if err := cmd.Run(); err != nil && !errors.As(err, &ee) {
		return nil, fmt.Errorf("running %s's suite: %w", l.Name, err)
	}
	rows, err := readSummary(filepath.Join(dir, "summary.md"))
	if err != nil {
		return nil, fmt.Errorf("%s's suite: %w", l.Name, err)
	}
	return rows, nil
}

// Libraries are the scoreboard's columns, in order.
var Libraries = []Library{
	{"leaselab", "leaselab's own elector (`chaos agent`)", nil},
	{"redislock", "github.com/bsm/redislock v0.9.4 (`examples/scoreboard/redislock`)", func(bin, _ string) []string { return []string{filepath.Join(bin, "redislock")} }},
	{"redsync", "github.com/go-redsync/redsync/v4 v4.18.1 (`examples/scoreboard/redsync`)", func(bin, _ string) []string { return []string{filepath.Join(bin, "redsync")} }},
	{"python", "the Python example, redis-py (`examples/agent-python/agent.py`)", func(_, root string) []string {
		return []string{"/usr/bin/python3", filepath.Join(root, "examples", "agent-python", "agent.py")}
	}},
}

// Config is one scoreboard run.
type Config struct {
	Root      string   // the repository (absolute)
	Out       string   // where binaries and every suite's reports go
	TimeScale float64  // chaos --time-scale
	Parallel  int      // chaos --parallel
	Seed      int64    // chaos --seed
	Scenarios []string // built-ins to run (none: every one)
	Libraries []string // names of Libraries to run (none: every one)
	// Concurrent runs the libraries' suites at once (CI's subset), not one
	// after another (the board: each library gets the same machine).
	Concurrent bool
	Log        io.Writer // the suites' output; must be safe for concurrent writes with Concurrent
}

// Cell is one library's result on one scenario, from its suite's summary.
type Cell struct {
	Verdict, Gap, Overlap, Stale, Note string
}

// Board is every library's cells by scenario, in the suites' order.
type Board struct {
	Scenarios []string
	Libraries []Library
	Cells     map[string]map[string]Cell // scenario → library → cell
}

func main() {
	var c Config
	var scen, libs, out string
	flag.StringVar(&c.Root, "root", "../..", "the leaselab repository")
	flag.StringVar(&c.Out, "out", filepath.Join(os.TempDir(), "leaselab-scoreboard"), "directory for the binaries and every suite's reports")
	flag.Float64Var(&c.TimeScale, "time-scale", 0.5, "chaos --time-scale")
	flag.IntVar(&c.Parallel, "parallel", 4, "chaos --parallel: scenarios at once within a library's suite")
	flag.Int64Var(&c.Seed, "seed", 1, "chaos --seed")
	flag.StringVar(&scen, "scenarios", "", "comma-separated built-ins (default: every one)")
	flag.StringVar(&libs, "libraries", "", "comma-separated libraries (default: leaselab,redislock,redsync,python)")
	flag.StringVar(&out, "o", "", "write the Markdown here (default: stdout)")
	flag.Parse()
	c.Scenarios, c.Libraries = split(scen), split(libs)
	c.Log = os.Stderr
	if err := Main(context.Background(), c, out); err != nil {
		fmt.Fprintln(os.Stderr, "scoreboard:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	var r []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			r = append(r, f)
		}
	}
	return r
}

// Main runs the scoreboard and writes its Markdown to out ("": stdout).
func Main(ctx context.Context, c Config, out string) error {
	load0 := loadavg()
	start := time.Now().UTC()
	b, err := Run(ctx, c)
	if err != nil {
		return err
	}
	var md bytes.Buffer
	fmt.Fprintf(&md, "Measured %s (%s), `--time-scale %g`, seed %d, `--parallel %d`, one library at a time, on %d cores; load average %s at the start, %s at the end.\n\n",
		start.Format("2006-01-02 15:04 MST"), time.Since(start).Round(time.Second), c.TimeScale, c.Seed, c.Parallel, runtime.NumCPU(), load0, loadavg())
	b.Markdown(&md)
	if out == "" {
		_, err = os.Stdout.Write(md.Bytes())
		return err
	}
	return writeBoard(out, md.Bytes())
}

// The markers between which an existing -o file holds the board
// (docs/scoreboard.md): only that part is replaced, the prose kept.
const (
	beginMarker = "<!-- scoreboard:begin -->\n"
	endMarker   = "<!-- scoreboard:end -->\n"
)

// writeBoard writes board to path: between the markers of an existing file
// that has them, else as the whole file.
func writeBoard(path string, board []byte) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	b, e := bytes.Index(old, []byte(beginMarker)), bytes.Index(old, []byte(endMarker))
	if b < 0 || e < b {
		return os.WriteFile(path, board, 0o644)
	}
	var out bytes.Buffer
	out.Write(old[:b+len(beginMarker)])
	out.Write(board)
	out.Write(old[e:])
	return os.WriteFile(path, out.Bytes(), 0o644)
}

// loadavg is the machine's 1-minute load average, or "?".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// Run builds chaos and the agents and runs each library's suite.
func Run(ctx context.Context, c Config) (*Board, error) {
	root, err := filepath.Abs(c.Root)
	if err != nil {
		return nil, err
	}
	if c.Out, err = filepath.Abs(c.Out); err != nil {
		return nil, err
	}
	bin := filepath.Join(c.Out, "bin")
	modDir := filepath.Join(root, "examples", "scoreboard")
	if err := gobuild(ctx, root, filepath.Join(bin, "chaos"), "./cmd/chaos"); err != nil {
		return nil, err
	}
	for _, a := range []string{"redislock", "redsync"} {
		if err := gobuild(ctx, modDir, filepath.Join(bin, a), "./"+a); err != nil {
			return nil, err
		}
	}
	b := &Board{Cells: map[string]map[string]Cell{}}
	for _, l := range Libraries {
		if len(c.Libraries) == 0 || contains(c.Libraries, l.Name) {
			b.Libraries = append(b.Libraries, l)
		}
	}
	results := make([][]row, len(b.Libraries))
	errs := make([]error, len(b.Libraries))
	var wg sync.WaitGroup
	for i, l := range b.Libraries {
		suite := func() { results[i], errs[i] = runSuite(ctx, c, l, bin, root) }
		if !c.Concurrent {
			suite()
			continue
		}
		wg.Go(suite)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, l := range b.Libraries {
		for _, r := range results[i] {
			if b.Cells[r.name] == nil {
				b.Cells[r.name] = map[string]Cell{}
				b.Scenarios = append(b.Scenarios, r.name)
			}
			b.Cells[r.name][l.Name] = r.Cell
		}
	}
	return b, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func gobuild(ctx context.Context, dir, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s in %s: %v\n%s", pkg, dir, err, b)
	}
	return nil
}

type row struct {
	name string
	Cell
}

// readSummary reads the scenario table of a suite's summary.md by its
// header's names (| Scenario | Verdict | Note | Seed | Max gap | Max
// overlap | … | Stale | …), so that a column moved does not shift them.
func readSummary(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []row
	var col map[string]int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "| Scenario |") {
			col = map[string]int{}
			for i, name := range cellsOf(line) {
				col[name] = i
			}
			for _, name := range []string{"Verdict", "Max gap", "Max overlap", "Stale", "Note"} {
				if _, ok := col[name]; !ok {
					return nil, fmt.Errorf("%s: the scenario table has no %q column: %q", path, name, line)
				}
			}
			continue
		}
		if col == nil || strings.HasPrefix(line, "| ---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := cellsOf(line)
		if len(cells) != len(col) {
			return nil, fmt.Errorf("%s: a row of %d cells, want %d: %q", path, len(cells), len(col), line)
		}
		rows = append(rows, row{name: linkText(cells[0]), Cell: Cell{
			Verdict: strings.Trim(cells[col["Verdict"]], "*"), Gap: cells[col["Max gap"]], Overlap: cells[col["Max overlap"]],
			Stale: cells[col["Stale"]], Note: cells[col["Note"]]}})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no scenario rows", path)
	}
	return rows, nil
}

// cellsOf splits a Markdown table row at its unescaped pipes.
func cellsOf(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// linkText is a Markdown link's text ("[a](b)" → "a"), or s.
func linkText(s string) string {
	if strings.HasPrefix(s, "[") {
		if i := strings.Index(s, "]("); i > 0 {
			return s[1:i]
		}
	}
	return s
}

// Markdown writes the board: one row per scenario, one column per
// library, each cell "VERDICT gap / overlap / stale"; refusals and notes
// below the table.
func (b *Board) Markdown(w io.Writer) {
	fmt.Fprint(w, "| scenario |")
	for _, l := range b.Libraries {
		fmt.Fprintf(w, " %s |", l.Name)
	}
	fmt.Fprint(w, "\n| --- |")
	for range b.Libraries {
		fmt.Fprint(w, " --- |")
	}
	fmt.Fprintln(w)
	type note struct{ lib, scen, text string }
	var notes []note
	for _, s := range b.Scenarios {
		fmt.Fprintf(w, "| %s |", s)
		for _, l := range b.Libraries {
			c, ok := b.Cells[s][l.Name]
			switch {
			case !ok:
				fmt.Fprint(w, " — |")
			case c.Verdict == "REFUSED":
				fmt.Fprintf(w, " refused: %s |", refusedWhy(c.Note))
			default:
				fmt.Fprintf(w, " **%s** %s / %s / %s |", c.Verdict, c.Gap, c.Overlap, c.Stale)
				if c.Note != "" && c.Note != "—" {
					notes = append(notes, note{l.Name, s, c.Note})
				}
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nEach cell: verdict, max gap / max overlap / stale leadership (windows, longest), as `chaos suite` measured them.")
	fmt.Fprintln(w, "\nLibraries:")
	for _, l := range b.Libraries {
		fmt.Fprintf(w, "- **%s**: %s\n", l.Name, l.About)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nNotes of the suites:")
		for _, n := range notes {
			fmt.Fprintf(w, "- %s, %s: %s\n", n.lib, n.scen, n.text)
		}
	}
}

// refusedWhy shortens a refusal's note to what the agent lacks or the
// backend cannot do.
func refusedWhy(note string) string {
	switch {
	case strings.Contains(note, "\"runner\" capability"):
		return "no `runner`"
	case strings.Contains(note, "\"safe\" capability"):
		return "no `safe`"
	case strings.Contains(note, "\"clock\" capability"):
		return "no `clock`"
	case strings.Contains(note, "\"cluster\" capability"):
		return "no `cluster`"
	}
	if len(note) > 60 {
		note = note[:60] + "…"
	}
	return note
}
