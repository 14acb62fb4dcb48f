package reports

import (
	"github.com/leaselab/leaselab/model/verdict"

	"bufio"
	"bytes"
	"context"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/leaselab/leaselab/internal/userfile"
)

// Options tune a run report.
type Options struct {
	// Command is the exact command that reproduces the run, shown under
	// "How to reproduce". Default:
	// go run ./cmd/chaos run <scenario> --seed <seed> --time-scale <scale>.
	Command string
	// MarkdownImage is how report.md shows the timeline plot. "" (the
	// default) links timeline.png beside it, which breaks once the text is
	// pasted elsewhere (report.md says so); MarkdownInline puts the PNG in
	// the file as a data URI (most viewers show it; GitHub does not); any
	// other value is the URL of the run's directory as published (a CI
	// artifact link), to which "/timeline.png" is added.
	MarkdownImage string
}

// MarkdownInline is the Options.MarkdownImage that puts the plot inside
// report.md.
const MarkdownInline = "inline"

// markdownImage is the image source report.md uses, and whether it works
// only beside timeline.png.
func (o Options) markdownImage(png []byte) (src string, relative bool) {
	switch o.MarkdownImage {
	case "":
		return FilePNG, true
	case MarkdownInline:
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(png), false
	}
	return strings.TrimRight(o.MarkdownImage, "/") + "/" + FilePNG, false
}

// Files are the paths WriteRun wrote, each inside its dir.
type Files struct {
	HTML, Markdown, JSON, Events, SVG, PNG, JUnit string
}

// All lists the files in the order WriteRun writes them.
func (f Files) All() []string {
	return []string{f.JSON, f.Events, f.SVG, f.PNG, f.Markdown, f.HTML, f.JUnit}
}

// File names WriteRun uses inside its directory.
const (
	FileHTML     = "report.html"
	FileMarkdown = "report.md"
	FileJSON     = "result.json"
	FileEvents   = "events.jsonl"
	FileSVG      = "timeline.svg"
	FilePNG      = "timeline.png"
	FileJUnit    = "junit.xml"
)

// LinkLatest points the link name, beside dir, at dir (its base name),
// replacing the link there: a scenario's "latest" reports. It is best
// effort: where links cannot be made, the reports are still in dir.
func LinkLatest(dir, name string) {
	link := filepath.Join(filepath.Dir(dir), name)
	_ = os.Remove(link)
	_ = os.Symlink(filepath.Base(dir), link)
}

// WriteRun writes every report of one run into dir, creating it: report.html,
// report.md, result.json (the full result, from which ReadResult and the
// renderers can redo everything), events.jsonl, timeline.svg, timeline.png
// and junit.xml. The data files are written first, so that a failure to
// render still leaves the run's measurements on disk. A failure to plot does
// not stop the text reports: they say the plot is missing, and WriteRun
// returns the error after writing everything else.
//
// Each file is written beside its name, and all are renamed into place once
// the last is whole: an earlier report in dir (observe --from's default is
// the recording's own directory) is replaced as a whole. When ctx ends
// first (Ctrl-C on a report of a million transitions), WriteRun stops
// within a buffer's write, removes what it had written of this report,
// leaving an earlier one whole (a mix of the two would mislead), and
// returns an error wrapping ctx.Err(). Any other error renames what was
// written whole (the measurements first), and a plot that failed removes
// an earlier report's plot.
func WriteRun(ctx context.Context, dir string, res *verdict.Result, o Options) (files Files, err error) {
	if res == nil {
		return Files{}, errors.New("reports: no result to write")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, fmt.Errorf("reports: %w", err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	files = Files{
		HTML: p(FileHTML), Markdown: p(FileMarkdown), JSON: p(FileJSON), Events: p(FileEvents),
		SVG: p(FileSVG), PNG: p(FilePNG), JUnit: p(FileJUnit),
	}
	var (
		written [][2]string // temporary name, final name
		stale   []string    // an earlier report's files this one has none of
	)
	defer func() {
		if err != nil && ctx.Err() != nil {
			for _, f := range written {
				_ = os.Remove(f[0])
			}
			err = fmt.Errorf("reports: interrupted while writing %s (its files removed): %w", dir, ctx.Err())
			return
		}
		// Renamed one after another with nothing in between to
		// interrupt: the earlier report is replaced at once.
		for _, f := range written {
			if rerr := os.Rename(f[0], f[1]); rerr != nil {
				_ = os.Remove(f[0])
				err = errors.Join(err, fmt.Errorf("reports: %w", rerr))
			}
		}
		for _, f := range stale {
			_ = os.Remove(f)
		}
	}()
	write := func(path string, fill func(w io.Writer) error) error {
		tmp, err := writeTemp(ctx, path, fill)
		if err != nil {
			return err
		}
		written = append(written, [2]string{tmp, path})
		return nil
	}

	if err := write(files.JSON, func(w io.Writer) error { return writeResultJSON(w, res) }); err != nil {
		return files, err
	}
	if err := write(files.Events, res.Timeline.WriteJSONLines); err != nil {
		return files, err
	}

	svg, png, plotErr := Plot(res)
	if err := ctx.Err(); err != nil {
		return files, err
	}
	if plotErr != nil {
		// The text reports say the plot is missing: an earlier run's
		// beside them would be taken for this one's.
		stale = append(stale, files.SVG, files.PNG)
	} else {
		for _, f := range []struct {
			path string
			b    []byte
		}{{files.SVG, svg}, {files.PNG, png}} {
			if err := write(f.path, func(w io.Writer) error { _, err := w.Write(f.b); return err }); err != nil {
				return files, err
			}
		}
	}

	d := build(res, o)
	d.AgentLogs = agentLogLinks(dir, res.Agent)
	if err := write(files.Markdown, func(w io.Writer) error {
		mw := bufio.NewWriter(w)
		writeMarkdown(mw, d, plotErr, png, o)
		return mw.Flush()
	}); err != nil {
		return files, err
	}
	if err := write(files.HTML, func(w io.Writer) error { return writeHTML(w, d, png, plotErr) }); err != nil {
		return files, err
	}
	if err := write(files.JUnit, func(w io.Writer) error {
		return writeJUnit(w, []junitInput{{res: res, cmd: o.Command}})
	}); err != nil {
		return files, err
	}
	if plotErr != nil {
		return files, fmt.Errorf("reports: %w", plotErr)
	}
	return files, nil
}

// writeTemp writes path through fill, buffered, into a file beside it, and
// returns that file's name, to be renamed into place (a report's file is
// never left half written); on an error it removes it. Every buffer's
// write checks ctx first.
func writeTemp(ctx context.Context, path string, fill func(w io.Writer) error) (name string, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.partial")
	if err != nil {
		return "", fmt.Errorf("reports: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(ctxWriter{ctx, tmp}, 1<<16)
	if err := fill(bw); err != nil {
		return "", fmt.Errorf("reports: writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return "", fmt.Errorf("reports: writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return "", fmt.Errorf("reports: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("reports: %w", err)
	}
	return tmp.Name(), nil
}

// ctxWriter refuses to write once its context has ended.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// writeResultJSON writes res as json.MarshalIndent(res, "", "  ") and a
// newline would, byte for byte, without holding the encoding of its long
// lists in memory (twice: MarshalIndent indents a copy): a slice of more
// than streamAbove items in res or in a struct inside it (the timeline,
// the analysis's beliefs, steps and windows: a million each for a long
// watch) goes out one item at a time.
func writeResultJSON(w io.Writer, res *verdict.Result) error {
	_, err := streamResultJSON(w, res)
	return err
}

// streamResultJSON is writeResultJSON, saying how many lists it streamed.
func streamResultJSON(w io.Writer, res *verdict.Result) (streamed int, err error) {
	rest := *res // big slices are cut to one item in this copy only
	var big []bigSlice
	findBig(reflect.ValueOf(&rest).Elem(), 1, &big)
	js, err := json.MarshalIndent(&rest, "", "  ")
	if err != nil {
		return 0, fmt.Errorf("encoding the result: %w", err)
	}
	type cut struct {
		at, n int
		b     bigSlice
	}
	var cuts []cut
	for _, b := range big {
		// The slice cut to its first item, as MarshalIndent wrote it
		// under its key at its depth.
		one, err := json.MarshalIndent(b.field.Interface(), b.indent, "  ")
		if err != nil {
			return 0, fmt.Errorf("encoding the result: %w", err)
		}
		want := append([]byte("\n"+b.indent+b.key+": "), one...)
		at := bytes.Index(js, want)
		if at < 0 {
			// Not where it should be (a name encoding/json spells
			// otherwise): the result whole, at once, as it always was.
			js, err := json.MarshalIndent(res, "", "  ")
			if err != nil {
				return 0, fmt.Errorf("encoding the result: %w", err)
			}
			_, err = w.Write(append(js, '\n'))
			return 0, err
		}
		cuts = append(cuts, cut{at, len(want), b})
	}
	slices.SortFunc(cuts, func(a, b cut) int { return a.at - b.at })
	last := 0
	for _, c := range cuts {
		if _, err := w.Write(js[last:c.at]); err != nil {
			return 0, err
		}
		if _, err := io.WriteString(w, "\n"+c.b.indent+c.b.key+": ["); err != nil {
			return 0, err
		}
		inner := c.b.indent + "  "
		for i := range c.b.full.Len() {
			item, err := json.MarshalIndent(c.b.full.Index(i).Interface(), inner, "  ")
			if err != nil {
				return 0, fmt.Errorf("encoding %s item %d: %w", c.b.key, i, err)
			}
			sep := ",\n" + inner
			if i == 0 {
				sep = "\n" + inner
			}
			if _, err := io.WriteString(w, sep); err != nil {
				return 0, err
			}
			if _, err := w.Write(item); err != nil {
				return 0, err
			}
		}
		if _, err := io.WriteString(w, "\n"+c.b.indent+"]"); err != nil {
			return 0, err
		}
		last = c.at + c.n
	}
	_, err = w.Write(append(js[last:], '\n'))
	return len(cuts), err
}

// streamAbove is the length above which writeResultJSON streams a slice.
const streamAbove = 1000

// bigSlice is a slice field writeResultJSON streams: field (in its copy of
// the result, cut to one item), the slice whole, its quoted key and the
// indentation of its key.
type bigSlice struct {
	field, full reflect.Value
	key, indent string
}

// findBig lists the slices longer than streamAbove among the fields of the
// struct v, whose keys are at depth, and in the structs held in them by
// value (a pointer's target is shared with the caller's result: not cut).
// It follows encoding/json's rules for the names: the tag's, or the
// field's; "-" skipped; an untagged embedded struct's fields at its own
// depth.
func findBig(v reflect.Value, depth int, out *[]bigSlice) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" || !sf.IsExported() && !sf.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if marshals(fv.Type()) || strings.Contains(opts, "string") {
			continue
		}
		switch {
		case sf.Anonymous && name == "" && fv.Kind() == reflect.Struct:
			findBig(fv, depth, out)
		case !sf.IsExported():
		case fv.Kind() == reflect.Struct:
			findBig(fv, depth+1, out)
		case fv.Kind() == reflect.Slice && fv.Len() > streamAbove && fv.Type().Elem().Kind() != reflect.Uint8:
			if name == "" {
				name = sf.Name
			}
			key, _ := json.Marshal(name)
			full := reflect.ValueOf(fv.Interface())
			fv.Set(fv.Slice(0, 1))
			*out = append(*out, bigSlice{field: fv, full: full, key: string(key), indent: strings.Repeat("  ", depth)})
		}
	}
}

// marshals reports whether encoding/json leaves t's encoding to t itself.
func marshals(t reflect.Type) bool {
	j, x := reflect.TypeFor[json.Marshaler](), reflect.TypeFor[encoding.TextMarshaler]()
	return t.Implements(j) || t.Implements(x) || reflect.PointerTo(t).Implements(j) || reflect.PointerTo(t).Implements(x)
}

// ReadResult reads a result.json written by WriteRun, to render its reports
// again (after a change to the renderers, or on another machine). Only a
// regular file is read (userfile.Read).
func ReadResult(path string) (*verdict.Result, error) {
	b, err := userfile.Read(path, 0, "a result.json")
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	var res verdict.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("reports: reading %s: %w", path, err)
	}
	return &res, nil
}
