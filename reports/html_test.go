package reports

import (
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"encoding/base64"
	"encoding/xml"
	"image/png"
	"io"
	"strings"
	"testing"
)

// node is a parsed element: enough of a DOM to check structure.
type node struct {
	name     string
	attrs    map[string]string
	children []*node
	text     strings.Builder
}

// parseXHTML parses the page strictly as XML. The renderer promises
// well-formed output, so this doubles as a check of that promise, without a
// dependency on an HTML parser.
func parseXHTML(t *testing.T, page []byte) *node {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	root := &node{name: "#document"}
	stack := []*node{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page is not well-formed: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			n := &node{name: tk.Name.Local, attrs: map[string]string{}}
			for _, a := range tk.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			top := stack[len(stack)-1]
			top.children = append(top.children, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			for _, n := range stack {
				n.text.Write(tk)
			}
		}
	}
	if len(stack) != 1 {
		t.Fatalf("unclosed elements: %d", len(stack)-1)
	}
	return root
}

func (n *node) all(name string) []*node {
	var out []*node
	var walk func(*node)
	walk = func(x *node) {
		if x.name == name {
			out = append(out, x)
		}
		for _, c := range x.children {
			walk(c)
		}
	}
	walk(n)
	return out
}

func renderHTML(t *testing.T) (*node, []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, fixture(), Options{}); err != nil {
		t.Fatal(err)
	}
	return parseXHTML(t, b.Bytes()), b.Bytes()
}

func TestHTMLParsesAndHasThePlot(t *testing.T) {
	doc, _ := renderHTML(t)
	var found bool
	for _, img := range doc.all("img") {
		src := img.attrs["src"]
		payload, ok := strings.CutPrefix(src, "data:image/png;base64,")
		if !ok {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			t.Fatalf("plot data URL: %v", err)
		}
		if _, err := png.Decode(bytes.NewReader(raw)); err != nil {
			t.Fatalf("plot is not a PNG: %v", err)
		}
		found = true
	}
	if !found && len(doc.all("svg")) == 0 {
		t.Fatal("no embedded plot (<svg> or data:image/png)")
	}
}

func TestHTMLHasTheTables(t *testing.T) {
	doc, _ := renderHTML(t)
	tables := map[string]*node{}
	for _, div := range doc.all("div") {
		if div.attrs["class"] != "table" {
			continue
		}
		if h := div.all("h3"); len(h) > 0 {
			tables[h[0].text.String()] = div
		}
	}
	for caption, want := range map[string]string{
		"Overlap windows (two or more believed leaders)":                               "18.001s",
		"Gaps (no believed leader, after the first election)":                          "36.200s",
		"Stale leadership (believed it led while Redis held another value)":            "12.510s",
		"Phantom leases (Redis held an id whose instance did not believe it led)":      "35.000s",
		"Fault #0: partition on i0, applied 10.000s, healed 25.000s":                   "ABOVE prediction",
		"Handovers (leadership passing to another incarnation)":                        "i2 (cccccc)",
		"Measurement error (how late the harness observed and acted)":                  "median 3ms",
		"Duplicate chores (the same chore on two instances within one chore interval)": "No duplicate chore.",
	} {
		div, ok := tables[caption]
		if !ok {
			t.Errorf("no table %q", caption)
			continue
		}
		if !strings.Contains(div.text.String(), want) {
			t.Errorf("table %q does not mention %q", caption, want)
		}
	}
	// The headline, the finding and the broken expectation stand out.
	text := doc.text.String()
	for _, want := range []string{
		"FAIL",
		"Finding: the spec says split brain is bounded by the TTL (5s); measured an overlap of 5.749s",
		"overlap_windows ≤ 0 (0): measured 1 — fail",
		"chaos run partition-leader.yaml --seed 42 --time-scale 1",
		"How to read this report",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	for _, h := range doc.all("header") {
		if !strings.Contains(h.attrs["class"], "fail") {
			t.Errorf("banner class %q; want it to carry the fail colour", h.attrs["class"])
		}
	}
}

// TestHTMLIsSelfContained: the page is attached to reviews and opened
// offline; it must load nothing.
func TestHTMLIsSelfContained(t *testing.T) {
	doc, page := renderHTML(t)
	if n := len(doc.all("script")); n > 0 {
		t.Errorf("%d <script> elements", n)
	}
	for _, l := range doc.all("link") {
		t.Errorf("<link href=%q>: styles must be inline", l.attrs["href"])
	}
	var walk func(*node)
	walk = func(n *node) {
		for _, a := range []string{"src", "href", "srcset", "data", "action", "poster"} {
			v := strings.ToLower(strings.TrimSpace(n.attrs[a]))
			if strings.HasPrefix(v, "http:") || strings.HasPrefix(v, "https:") || strings.HasPrefix(v, "//") {
				t.Errorf("<%s %s=%q> refers to the network", n.name, a, v)
			}
		}
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(doc)
	if bytes.Contains(page, []byte("url(")) || bytes.Contains(page, []byte("@import")) {
		t.Error("the CSS loads a resource")
	}
}

// TestHTMLEscapesUserText: a scenario's description is user text and must
// not become markup.
func TestHTMLEscapesUserText(t *testing.T) {
	res := fixture()
	res.Scenario.Description = `<script>alert("x")</script> & <b>bold</b>`
	res.Errors = []string{"<img src=http://evil/>"}
	var b bytes.Buffer
	if err := HTML(&b, res, Options{}); err != nil {
		t.Fatal(err)
	}
	doc := parseXHTML(t, b.Bytes())
	if len(doc.all("script")) > 0 || len(doc.all("b")) > 0 {
		t.Error("user text became markup")
	}
	if !strings.Contains(doc.text.String(), `<script>alert("x")</script> & <b>bold</b>`) {
		t.Error("user text was not shown as text")
	}
	var md bytes.Buffer
	if err := Markdown(&md, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "<script>") {
		t.Error("Markdown passes the description through as HTML")
	}
}

func TestHTMLVerdicts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		res   func() *verdict.Result
		class string
	}{
		{"pass", passing, "banner pass"},
		{"fail", fixture, "banner fail"},
		{"incomplete", incomplete, "banner incomplete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			res := tc.res()
			if err := HTML(&b, res, Options{}); err != nil {
				t.Fatal(err)
			}
			doc := parseXHTML(t, b.Bytes())
			h := doc.all("header")
			if len(h) != 1 || h[0].attrs["class"] != tc.class {
				t.Fatalf("banner %v; want class %q", h, tc.class)
			}
			if tc.name == "incomplete" {
				text := doc.text.String()
				for _, want := range []string{"INCOMPLETE", "context canceled", "Harness errors", "toxiproxy: connection refused"} {
					if !strings.Contains(text, want) {
						t.Errorf("the page does not say %q", want)
					}
				}
			}
		})
	}
}
