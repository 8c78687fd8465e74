package trace

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The files the catalogue tests read, relative to this package.
const (
	catalogueDoc = "../../docs/trace.md"
	goldenGlob   = "../../scenarios/*.golden"
)

// pair is one (component, kind) the trace can carry: a row of the catalogue.
type pair struct {
	component Component
	kind      Kind
}

// catalogue is what parseCatalogue reads from the Catalogue section of docs/trace.md.
type catalogue struct {
	// sections holds the component of every "### `component`" heading, in order.
	sections []Component
	// rows holds every documented pair, with the line of its first row.
	rows map[pair]int
	// cells holds the fields and func cells of every row, in order.
	cells []rowCells
}

// rowCells are the cells of one catalogue row that say which reasons and functions it allows.
type rowCells struct {
	pair
	line          int
	fields, funcs string
}

// kinds returns every kind the catalogue documents, for any component.
func (c catalogue) kinds() map[Kind]bool {
	out := map[Kind]bool{}
	for p := range c.rows {
		out[p.kind] = true
	}
	return out
}

var (
	backticked  = regexp.MustCompile("`([^`]+)`")
	eventCell   = regexp.MustCompile("^`([^`\\s]+)`$")
	catalogueHd = []string{"event", "fields", "func", "meaning"}
)

// parseCatalogue reads the "## Catalogue" section of a trace.md: a "### `component`: ..." heading
// per component, each followed by at most one event table. An event table is one whose first
// header cell is "event"; its header must be catalogueHd and each of its rows must name one event
// word in backticks in the first cell. Tables with other headers (the reason tables) are skipped.
// Every line that breaks these rules is an error.
func parseCatalogue(doc string) (catalogue, error) {
	c := catalogue{rows: map[pair]int{}}
	var errs []error
	var (
		inSection bool
		component Component
		table     int // 0: not in a table; 1: header read, separator next; 2: in an event table's rows; 3: in another table
	)
	for i, line := range strings.Split(doc, "\n") {
		n := i + 1
		switch {
		case line == "## Catalogue":
			inSection = true
			continue
		case strings.HasPrefix(line, "## "):
			inSection = false
			continue
		}
		if !inSection {
			continue
		}
		if strings.HasPrefix(line, "### ") {
			m := backticked.FindStringSubmatch(line)
			if m == nil {
				errs = append(errs, fmt.Errorf("line %d: heading %q names no `component`", n, line))
				component = ""
				continue
			}
			component = Component(m[1])
			c.sections = append(c.sections, component)
			continue
		}
		if !strings.HasPrefix(line, "|") {
			table = 0
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		switch table {
		case 0: // a header
			table = 3
			if cells[0] != "event" {
				continue
			}
			table = 1
			if !slices.Equal(cells, catalogueHd) {
				errs = append(errs, fmt.Errorf("line %d: event table header = %q, want %q", n, cells, catalogueHd))
			}
			if component == "" {
				errs = append(errs, fmt.Errorf("line %d: event table outside a component section", n))
			}
		case 1: // the separator
			table = 2
		case 2: // a row
			if len(cells) != len(catalogueHd) {
				errs = append(errs, fmt.Errorf("line %d: row has %d cells, want %d", n, len(cells), len(catalogueHd)))
			}
			m := eventCell.FindStringSubmatch(cells[0])
			if m == nil {
				errs = append(errs, fmt.Errorf("line %d: event cell = %q, want one event word in backticks", n, cells[0]))
				continue
			}
			p := pair{component, Kind(m[1])}
			if len(cells) == len(catalogueHd) {
				c.cells = append(c.cells, rowCells{p, n, cells[1], cells[2]})
			}
			if _, ok := c.rows[p]; !ok {
				c.rows[p] = n
			}
		}
	}
	if len(c.sections) == 0 {
		errs = append(errs, errors.New("no \"## Catalogue\" section with \"### `component`\" headings"))
	}
	return c, errors.Join(errs...)
}

// parseTextLine returns the component and the event word of one line of the text form. The
// columns are the time, the component, the pod and the body, whose first word is the event
// (docs/trace.md, "Text form"). None of the first three holds a space (a pod is namespace/name or
// "-"), so splitting on runs of spaces finds them even when a long pod breaks the alignment.
func parseTextLine(line string) (Component, Kind, error) {
	f := strings.Fields(line)
	if len(f) < 4 {
		return "", "", fmt.Errorf("%d columns, want at least 4 (time, component, pod, event)", len(f))
	}
	secs, ok := strings.CutSuffix(f[0], "s")
	if _, err := strconv.ParseFloat(secs, 64); !ok || err != nil {
		return "", "", fmt.Errorf("time column = %q, want seconds such as 12.000s", f[0])
	}
	if strings.HasPrefix(f[3], "[") {
		return "", "", fmt.Errorf("body column = %q, want an event word before the function", f[3])
	}
	return Component(f[1]), Kind(f[3]), nil
}

// declaredKinds returns the value of every constant of type Kind in the package's non-test
// files, by name. A Kind constant whose value is not a string literal is an error: the test could
// not see its word.
func declaredKinds() (map[string]Kind, error) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	kinds := map[string]Kind{}
	var errs []error
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					var value ast.Expr
					if i < len(vs.Values) {
						value = vs.Values[i]
					}
					word, isKind, err := kindValue(vs.Type, value)
					switch {
					case err != nil:
						errs = append(errs, fmt.Errorf("%s: %s: %w", fset.Position(id.Pos()), id.Name, err))
					case isKind:
						kinds[id.Name] = Kind(word)
					}
				}
			}
		}
	}
	return kinds, errors.Join(errs...)
}

// kindValue reports whether a constant is a Kind, declared as `Name Kind = "word"` or
// `Name = Kind("word")`, and returns its word.
func kindValue(typ, value ast.Expr) (word string, isKind bool, err error) {
	isKindIdent := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && id.Name == "Kind"
	}
	switch {
	case isKindIdent(typ):
	case typ == nil:
		call, ok := value.(*ast.CallExpr)
		if !ok || !isKindIdent(call.Fun) || len(call.Args) != 1 {
			return "", false, nil
		}
		value = call.Args[0]
	default:
		return "", false, nil
	}
	lit, ok := value.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", true, errors.New("value is not a string literal")
	}
	word, err = strconv.Unquote(lit.Value)
	return word, true, err
}

func readCatalogue(t *testing.T) catalogue {
	t.Helper()
	doc, err := os.ReadFile(catalogueDoc)
	if err != nil {
		t.Fatalf("read catalogue: %v", err)
	}
	c, err := parseCatalogue(string(doc))
	if err != nil {
		t.Errorf("parseCatalogue(%s) error = %v, want nil", catalogueDoc, err)
	}
	return c
}

// TestCatalogueCoversGoldenTraces checks that every (component, event) pair the golden traces
// hold is documented. Each missing pair is reported once per file, at its first line.
func TestCatalogueCoversGoldenTraces(t *testing.T) {
	c := readCatalogue(t)
	goldens, err := filepath.Glob(goldenGlob)
	if err != nil || len(goldens) == 0 {
		t.Fatalf("filepath.Glob(%q) = %v, %v, want golden traces", goldenGlob, goldens, err)
	}
	for _, golden := range goldens {
		data, err := os.ReadFile(golden)
		if err != nil {
			t.Errorf("read golden: %v", err)
			continue
		}
		missing := map[pair]int{} // the pair's count in this file
		for i, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, strings.Repeat(" ", bodyColumn)) {
				// A continuation line goes on with the body of the event above.
				continue
			}
			component, kind, err := parseTextLine(line)
			if err != nil {
				t.Errorf("%s:%d: parseTextLine(%q) error = %v, want nil", golden, i+1, line, err)
				continue
			}
			p := pair{component, kind}
			if _, ok := c.rows[p]; ok {
				continue
			}
			if missing[p] == 0 {
				t.Errorf("%s:%d: documented(%s, %s) = false, want true: add a `%s` row to the `%s` table of docs/trace.md",
					golden, i+1, component, kind, kind, component)
			}
			missing[p]++
		}
	}
}

// TestCatalogueListsEveryKind checks that the Kind constants and the catalogue's event words are
// the same set: every constant is documented for some component, and every documented word is a
// constant.
func TestCatalogueListsEveryKind(t *testing.T) {
	c := readCatalogue(t)
	declared, err := declaredKinds()
	if err != nil {
		t.Errorf("declaredKinds() error = %v, want nil", err)
	}
	if len(declared) == 0 {
		t.Fatal("declaredKinds() = none, want the constants of kind.go")
	}
	documented := c.kinds()
	names := map[Kind]string{}
	for name, kind := range declared {
		if other, ok := names[kind]; ok {
			t.Errorf("constants %s and %s = %q, want one constant per word", other, name, kind)
		}
		names[kind] = name
		if !documented[kind] {
			t.Errorf("documented(%s = %q) = false, want a row in some table of docs/trace.md's catalogue", name, kind)
		}
	}
	for kind := range documented {
		if _, ok := names[kind]; !ok {
			t.Errorf("declared(%q) = false, want a Kind constant in sim/trace/kind.go for this catalogue word", kind)
		}
	}
}

// TestCatalogueSections checks that the catalogue has exactly one section per Component.
func TestCatalogueSections(t *testing.T) {
	c := readCatalogue(t)
	want, got := slices.Sorted(slices.Values(Components)), slices.Sorted(slices.Values(c.sections))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("catalogue sections mismatch (-want +got):\n%s", diff)
	}
}

func TestParseCatalogue(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    []pair
		wantErr string
	}{
		{
			name: "rows of event tables only",
			doc: "## Catalogue\n\n### `pleg`: the PLEG\n\n" +
				"| event | fields | func | meaning |\n|---|---|---|---|\n" +
				"| `ContainerDied` | `pod` | `relist` | died |\n| `error` | `message` | `relist` | failed |\n\n" +
				"| reason | source | cause |\n|---|---|---|\n| `Bad` | file | bad |\n\n" +
				"### `node`: the node\n\n" +
				"| event | fields | func | meaning |\n|---|---|---|---|\n| `error` | `pod` | `renewLease` | failed |\n\n" +
				"## After\n\n| event | fields | func | meaning |\n|---|---|---|---|\n| `outside` | | | |\n",
			want: []pair{{PLEG, "ContainerDied"}, {PLEG, KindError}, {Node, KindError}},
		},
		{
			name: "two words in one cell",
			doc: "## Catalogue\n\n### `pleg`\n\n| event | fields | func | meaning |\n|---|---|---|---|\n" +
				"| `ContainerStarted`, `ContainerDied` | `pod` | `relist` | changed |\n",
			wantErr: "line 7: event cell",
		},
		{
			name: "wrong header",
			doc: "## Catalogue\n\n### `pleg`\n\n| event | fields | meaning |\n|---|---|---|\n" +
				"| `health` | `to` | changed |\n",
			wantErr: "line 5: event table header",
		},
		{
			name:    "no catalogue",
			doc:     "## Text form\n",
			wantErr: "no \"## Catalogue\" section",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseCatalogue(tt.doc)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("parseCatalogue() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Errorf("parseCatalogue() error = %v, want nil", err)
			}
			var got []pair
			for p := range c.rows {
				got = append(got, p)
			}
			less := func(a, b pair) int {
				return strings.Compare(string(a.component)+" "+string(a.kind), string(b.component)+" "+string(b.kind))
			}
			slices.SortFunc(got, less)
			want := slices.SortedFunc(slices.Values(tt.want), less)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(pair{})); diff != "" {
				t.Errorf("parseCatalogue() rows mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseTextLine parses lines that Event.Text renders, so the parser follows the format.
func TestParseTextLine(t *testing.T) {
	tests := []struct {
		name  string
		event Event
	}{
		{
			name:  "no pod",
			event: Event{T: 20 * time.Second, Component: Sources, Event: "set", Source: "file", Pods: []string{}, Func: "listConfig"},
		},
		{
			name:  "pod and message",
			event: Event{T: 4 * time.Second, Component: PLEG, Event: "ContainerStarted", Pod: "default/web", UID: "6f1c2a9e0d4b", Container: "nginx", Message: "c 1", Func: "relist"},
		},
		{
			name: "long pod and body",
			event: Event{T: 12345 * time.Second, Component: Scenario, Event: "apiDeleteMirrorPod",
				Pod: "kube-system/a-very-long-static-pod-name-node-1", Message: strings.Repeat("long ", 20)},
		},
		{
			name:  "no func",
			event: Event{Component: Runtime, Event: "down", Delay: time.Minute, Message: "runtime is down"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := tt.event.Text()
			component, kind, err := parseTextLine(line)
			if err != nil {
				t.Fatalf("parseTextLine(%q) error = %v, want nil", line, err)
			}
			if component != tt.event.Component || kind != tt.event.Event {
				t.Errorf("parseTextLine(%q) = %s, %s, want %s, %s", line, component, kind, tt.event.Component, tt.event.Event)
			}
		})
	}
	for _, bad := range []string{"", "    1.000s  podconfig", "later  podconfig  -  update"} {
		if _, _, err := parseTextLine(bad); err == nil {
			t.Errorf("parseTextLine(%q) error = nil, want an error", bad)
		}
	}
}

func TestKindString(t *testing.T) {
	for _, k := range []Kind{KindUpdate, KindContainerDied, KindRestartRequested, Kind("")} {
		if got := k.String(); got != string(k) {
			t.Errorf("Kind(%q).String() = %q, want %q", string(k), got, string(k))
		}
	}
}

// fieldNames are the JSON keys, which the fields cell names in backticks among reason values.
var fieldNames = map[string]bool{
	"pod": true, "uid": true, "op": true, "source": true, "pods": true, "from": true, "to": true, "container": true,
	"exitCode": true, "delay": true, "reason": true, "message": true, "func": true, "file": true,
}

var optionalOrWord = regexp.MustCompile("(\\(?)`([^`]+)`")

// tuples returns what a catalogue row allows, as "component kind reason func" strings. The
// reasons are the backticked words after `reason` in the fields cell up to the next field name:
// none means any reason ("*"), a parenthesised `reason` that it may be absent too, no `reason`
// that it is absent. The functions are the backticked words of the func cell; "none" or
// "or none" allows an event without one.
func (r rowCells) tuples() []string {
	reasons := []string{""}
	toks := optionalOrWord.FindAllStringSubmatch(r.fields, -1)
	for i, tok := range toks {
		if tok[2] != "reason" {
			continue
		}
		var vals []string
		for _, next := range toks[i+1:] {
			if fieldNames[next[2]] {
				break
			}
			vals = append(vals, next[2])
		}
		switch {
		case len(vals) == 0:
			reasons = []string{"*"}
		case tok[1] == "(":
			reasons = append([]string{""}, vals...)
		default:
			reasons = vals
		}
		break
	}
	var funcs []string
	for _, m := range backticked.FindAllStringSubmatch(r.funcs, -1) {
		funcs = append(funcs, m[1])
	}
	if f := strings.TrimSpace(r.funcs); f == "none" || strings.HasSuffix(f, "or none") {
		funcs = append(funcs, "")
	}
	var out []string
	for _, reason := range reasons {
		for _, fn := range funcs {
			out = append(out, fmt.Sprintf("%s %s %q %q", r.component, r.kind, reason, fn))
		}
	}
	return out
}

// TestCatalogueMatchesRegistry checks that docs/trace.md's catalogue and the Catalogue registry
// allow the same (component, event, reason, func) tuples, the functions qualified as the trace
// renders them.
func TestCatalogueMatchesRegistry(t *testing.T) {
	c := readCatalogue(t)
	documented := map[string]int{}
	for _, r := range c.cells {
		for _, tu := range r.tuples() {
			documented[tu] = r.line
		}
	}
	registered := map[string]bool{}
	for _, en := range Catalogue {
		for _, reason := range en.Reasons {
			for _, fn := range en.Funcs {
				q := Event{Component: en.Component, Func: fn}.Where().Func
				registered[fmt.Sprintf("%s %s %q %q", en.Component, en.Kind, reason, q)] = true
			}
		}
	}
	for tu, line := range documented {
		if !registered[tu] {
			t.Errorf("docs/trace.md:%d allows %s, which trace.Catalogue does not register", line, tu)
		}
	}
	for tu := range registered {
		if _, ok := documented[tu]; !ok {
			t.Errorf("trace.Catalogue registers %s, which docs/trace.md's catalogue does not list", tu)
		}
	}
}

// TestRegistryFunctionsAreLocated checks that every function the registry allows has a location
// in the kubelet, except the API server's HTTP requests.
func TestRegistryFunctionsAreLocated(t *testing.T) {
	for _, en := range Catalogue {
		for _, fn := range en.Funcs {
			e := Event{Component: en.Component, Event: en.Kind, Func: fn}
			if !e.Located() {
				t.Errorf("(%s, %s) func %q has no location in sim/trace/funcs.go", en.Component, en.Kind, fn)
			} else if w := e.Where(); fn != "" && en.Component != APIServer && w.File == "" {
				t.Errorf("(%s, %s) func %q has no file", en.Component, en.Kind, fn)
			}
		}
	}
}

func TestRegistered(t *testing.T) {
	for _, tt := range []struct {
		e    Event
		want string
	}{
		{Event{Component: PodWorkers, Event: KindState, Func: "UpdatePod"}, ""},
		{Event{Component: Runtime, Event: KindExited, Reason: "Error"}, ""},
		{Event{Component: Mirror, Event: KindCreate, Reason: "Conflict", Func: "CreateMirrorPod"}, ""},
		{Event{Component: PodWorkers, Event: KindState, Func: "SyncPod"}, `func "SyncPod" is not in the catalogue`},
		{Event{Component: Runtime, Event: KindExited, Reason: "Evicted"}, `reason "Evicted"`},
		{Event{Component: PodManager, Event: KindState}, "(podmanager, state) is not in the catalogue"},
	} {
		err := Registered(tt.e)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("Registered(%+v) = %v, want %q", tt.e, err, tt.want)
		}
	}
}
