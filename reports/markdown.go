package reports

import (
	"github.com/leaselab/leaselab/model/verdict"

	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/leaselab/leaselab/internal/printable"
)

// Markdown writes the run report as GitHub-flavoured Markdown: the same
// findings as the HTML report, with the plot linked as timeline.png (the
// file WriteRun puts beside report.md).
func Markdown(w io.Writer, res *verdict.Result, o Options) error {
	bw := bufio.NewWriter(w)
	var png []byte
	var plotErr error
	if o.MarkdownImage == MarkdownInline {
		_, png, plotErr = Plot(res)
	}
	writeMarkdown(bw, build(res, o), plotErr, png, o)
	return bw.Flush()
}

// writeMarkdown writes the document; plotErr, if not nil, says why there is
// no timeline.png to link; png is the plot, for o.MarkdownImage inline.
func writeMarkdown(w *bufio.Writer, d *document, plotErr error, png []byte, o Options) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	b := d.Banner
	p("# %s\n\n", mdText(d.Title))
	p("**%s**: %s\n\n", b.Verdict, mdText(b.Headline))
	if b.Verdict == verdictIncomplete && b.Incomplete != "" {
		p("> **The run is incomplete:** %s\n\n", mdText(b.Incomplete))
	}
	mdList(w, "**Harness errors** (the result cannot be trusted):", "", b.Errors)
	mdList(w, "**Expectations not held:**", "", b.Broken)
	mdList(w, "**Findings** (the spec's claims, as measured):", "**Finding:** ", b.Findings)
	mdList(w, "**Above prediction** (the analytic model missed something):", "", b.Notes)
	mdList(w, "**Instance identity** (lease values that leave the key's holder unknown):", "**Finding:** ", b.Identity)

	// The description is prose: above the facts, not in a cell.
	for _, f := range d.Facts {
		if f[0] == "Description" {
			p("%s\n\n", mdText(strings.Join(strings.Fields(f[1]), " ")))
		}
	}
	p("| Fact | Value |\n|---|---|\n")
	for _, f := range d.Facts {
		if f[0] != "Description" {
			p("| %s | %s |\n", mdCell(f[0]), mdCell(f[1]))
		}
	}
	if len(d.AgentLogs) > 0 {
		logs := make([]string, len(d.AgentLogs))
		for i, l := range d.AgentLogs {
			logs[i] = "[" + mdText(l.Name) + "](" + l.Href + ")"
		}
		p("| Agent logs (stderr, instance.incarnation) | %s |\n", strings.Join(logs, " · "))
	}
	p("\n")

	for _, s := range d.Sections {
		p("## %s\n\n", mdText(s.Title))
		for _, para := range s.Intro {
			p("%s\n\n", mdText(para))
		}
		switch {
		case s.Plot && plotErr != nil:
			p("**The timeline plot could not be drawn:** %s\n\n", mdText(plotErr.Error()))
		case s.Plot:
			src, relative := o.markdownImage(png)
			p("![Timeline of the run](%s)\n\n", src)
			if relative {
				p("_The plot is `%s` beside this file: pasted into a PR or ticket, attach that file too, or write the report with `--md-inline` (the image inside the file) or `--md-image-base URL` (where the run's directory is published)._\n\n", FilePNG)
			}
		}
		for _, t := range s.Tables {
			mdTable(w, t)
		}
		if s.Code != "" {
			p("```sh\n%s\n```\n\n", printable.Text(s.Code))
		}
		for _, it := range s.Items {
			p("- %s\n", mdText(it))
		}
		if len(s.Items) > 0 {
			p("\n")
		}
	}
}

func mdList(w *bufio.Writer, title, prefix string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "%s\n\n", title)
	for _, it := range items {
		fmt.Fprintf(w, "- %s%s\n", prefix, mdText(it))
	}
	fmt.Fprintln(w)
}

func mdTable(w *bufio.Writer, t table) {
	if t.Caption != "" {
		fmt.Fprintf(w, "### %s\n\n", mdText(t.Caption))
	}
	if len(t.Rows) == 0 {
		fmt.Fprintf(w, "%s\n\n", mdText(nonEmpty(t.Empty, "None.")))
	} else {
		head := make([]string, len(t.Head))
		rule := make([]string, len(t.Head))
		for i, h := range t.Head {
			head[i], rule[i] = mdCell(h), "---"
		}
		fmt.Fprintf(w, "| %s |\n| %s |\n", strings.Join(head, " | "), strings.Join(rule, " | "))
		for _, r := range t.Rows {
			cells := make([]string, len(r))
			for i, x := range r {
				cells[i] = mdCell(x.Text)
				if cells[i] != "" && (x.Class == clsBad || x.Class == clsWarn) {
					cells[i] = "**" + cells[i] + "**"
				}
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		}
		fmt.Fprintln(w)
	}
	if m := t.MoreText(); m != "" {
		fmt.Fprintf(w, "%s\n\n", mdText(m))
	}
	if t.Note != "" {
		fmt.Fprintf(w, "%s\n\n", mdText(t.Note))
	}
}

// mdText keeps free text (scenario descriptions and error strings come from
// users) from being read as markup it is not, while leaving the raw
// Markdown readable: only what would actually change the rendering is
// escaped. "<" starts an HTML tag only before a letter, "/", "!" or "?";
// "*" and "`" always act; "_" inside words does not (GFM), so "max_gap"
// stays as written. Control characters (an agent's stderr in an error) are
// stripped or shown escaped (printable.Text), never written raw.
func mdText(s string) string {
	var b strings.Builder
	rs := []rune(printable.Text(s))
	for i, r := range rs {
		var next rune
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case r == '\r':
		case r == '\n':
			b.WriteByte(' ')
		case r == '<' && (unicode.IsLetter(next) || next == '/' || next == '!' || next == '?'):
			b.WriteString("&lt;")
		case r == '*' || r == '`' || (r == ']' && next == '('):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '_' && (i == 0 || !isWord(rs[i-1]) || !isWord(next)):
			b.WriteString("\\_")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// mdCell additionally escapes the column separator.
func mdCell(s string) string { return strings.ReplaceAll(mdText(s), "|", "\\|") }
