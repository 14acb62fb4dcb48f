package reports

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/leaselab/leaselab/model"
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
func WriteRun(dir string, res *model.Result, o Options) (Files, error) {
	if res == nil {
		return Files{}, errors.New("reports: no result to write")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, fmt.Errorf("reports: %w", err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	files := Files{
		HTML: p(FileHTML), Markdown: p(FileMarkdown), JSON: p(FileJSON), Events: p(FileEvents),
		SVG: p(FileSVG), PNG: p(FilePNG), JUnit: p(FileJUnit),
	}

	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return files, fmt.Errorf("reports: encoding the result: %w", err)
	}
	if err := os.WriteFile(files.JSON, append(js, '\n'), 0o644); err != nil {
		return files, fmt.Errorf("reports: %w", err)
	}
	var ev bytes.Buffer
	if err := res.Timeline.WriteJSONLines(&ev); err != nil {
		return files, fmt.Errorf("reports: %w", err)
	}
	if err := os.WriteFile(files.Events, ev.Bytes(), 0o644); err != nil {
		return files, fmt.Errorf("reports: %w", err)
	}

	svg, png, plotErr := Plot(res)
	if plotErr == nil {
		if err := os.WriteFile(files.SVG, svg, 0o644); err != nil {
			return files, fmt.Errorf("reports: %w", err)
		}
		if err := os.WriteFile(files.PNG, png, 0o644); err != nil {
			return files, fmt.Errorf("reports: %w", err)
		}
	}

	var md, page, junit bytes.Buffer
	d := build(res, o)
	mw := bufio.NewWriter(&md)
	writeMarkdown(mw, d, plotErr, png, o)
	if err := mw.Flush(); err != nil {
		return files, err
	}
	if err := writeHTML(&page, d, png, plotErr); err != nil {
		return files, err
	}
	if err := writeJUnit(&junit, []junitInput{{res: res, cmd: o.Command}}); err != nil {
		return files, err
	}
	for _, w := range []struct {
		path string
		b    []byte
	}{{files.Markdown, md.Bytes()}, {files.HTML, page.Bytes()}, {files.JUnit, junit.Bytes()}} {
		if err := os.WriteFile(w.path, w.b, 0o644); err != nil {
			return files, fmt.Errorf("reports: %w", err)
		}
	}
	if plotErr != nil {
		return files, fmt.Errorf("reports: %w", plotErr)
	}
	return files, nil
}

// ReadResult reads a result.json written by WriteRun, to render its reports
// again (after a change to the renderers, or on another machine).
func ReadResult(path string) (*model.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	var res model.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("reports: reading %s: %w", path, err)
	}
	return &res, nil
}
