package teach

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/scenarios"
)

// GlossaryPath is where the glossary lives, relative to the scenario directory.
const GlossaryPath = "lessons/glossary.yaml"

// Term is one entry of the glossary.
type Term struct {
	Term string `json:"term"`
	// Stands is what an abbreviation stands for; Expand writes it where the term is first used.
	Stands string `json:"stands,omitempty"`
	// Links are the words of the trace that mean the term: component names, event words, worker
	// states, operations. The timeline links them to the entry.
	Links []string `json:"links,omitempty"`
	// Kubelet is where the term lives in the kubelet's source.
	Kubelet    string `json:"kubelet,omitempty"`
	Definition string `json:"definition"`
}

// Glossary is the kubelet's vocabulary as the lessons use it.
type Glossary struct {
	Terms []Term `json:"terms"`
}

// ErrBadGlossary is wrapped by the errors of ParseGlossary about the glossary's content.
var ErrBadGlossary = errors.New("bad glossary")

// builtinGlossary is the glossary of the binary, parsed once.
var builtinGlossary = sync.OnceValues(func() (*Glossary, error) {
	data, err := fs.ReadFile(scenarios.FS, GlossaryPath)
	if err != nil {
		return nil, fmt.Errorf("load glossary: %w", err)
	}
	return ParseGlossary(data)
})

// BuiltinGlossary returns the glossary built into the binary (scenarios/lessons/glossary.yaml).
func BuiltinGlossary() (*Glossary, error) { return builtinGlossary() }

// ParseGlossary decodes a glossary and checks that every term has a definition and that no word
// names two terms (case counts: the sources' set is not PodConfig's SET).
func ParseGlossary(data []byte) (*Glossary, error) {
	g := &Glossary{}
	if err := yaml.UnmarshalStrict(data, g); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadGlossary, err)
	}
	var errs []error
	seen := map[string]string{}
	for i, t := range g.Terms {
		if t.Term == "" || strings.TrimSpace(t.Definition) == "" {
			errs = append(errs, fmt.Errorf("%w: term %d needs a term and a definition", ErrBadGlossary, i+1))
		}
		for _, w := range append([]string{t.Term}, t.Links...) {
			if other, ok := seen[w]; ok && other != t.Term {
				errs = append(errs, fmt.Errorf("%w: %q names both %q and %q", ErrBadGlossary, w, other, t.Term))
			}
			seen[w] = t.Term
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return g, nil
}

// Find returns the term a word names: the term itself or one of its links, as written, else in
// any case.
func (g *Glossary) Find(word string) (*Term, bool) {
	for _, same := range []func(a, b string) bool{func(a, b string) bool { return a == b }, strings.EqualFold} {
		for i, t := range g.Terms {
			if same(t.Term, word) || slices.ContainsFunc(t.Links, func(l string) bool { return same(l, word) }) {
				return &g.Terms[i], true
			}
		}
	}
	return nil, false
}

// Write writes the glossary, or the terms the words name, each with its definition.
func (g *Glossary) Write(w io.Writer, words ...string) error {
	terms := g.Terms
	if len(words) > 0 {
		terms = nil
		var unknown []string
		for _, word := range words {
			t, ok := g.Find(word)
			if !ok {
				unknown = append(unknown, word)
				continue
			}
			terms = append(terms, *t)
		}
		if len(unknown) > 0 {
			return fmt.Errorf("the glossary has no %s", strings.Join(unknown, ", "))
		}
	}
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(t.Term)
		if t.Stands != "" {
			b.WriteString(" (" + t.Stands + ")")
		}
		b.WriteString("\n")
		for _, line := range strings.Split(wrap(strings.TrimSpace(t.Definition)), "\n") {
			fmt.Fprintf(&b, "  %s\n", line)
		}
		if t.Kubelet != "" {
			fmt.Fprintf(&b, "  Kubelet: %s\n", t.Kubelet)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Expander writes what an abbreviation stands for where a text first uses it: "the PLEG's
// relist" becomes "the Pod Lifecycle Event Generator (PLEG)'s relist" the first time, and stays
// as it is after. One Expander serves one output, so that each term is expanded once in it.
type Expander struct {
	terms []*expansion
}

type expansion struct {
	re     *regexp.Regexp
	stands string
	done   bool
}

// NewExpander returns an Expander of the glossary's abbreviations; a nil glossary expands nothing.
func NewExpander(g *Glossary) *Expander {
	x := &Expander{}
	if g == nil {
		return x
	}
	for _, t := range g.Terms {
		if t.Stands != "" {
			x.terms = append(x.terms, &expansion{re: regexp.MustCompile(`\b` + regexp.QuoteMeta(t.Term) + `\b`), stands: t.Stands})
		}
	}
	return x
}

// Expand returns text with the first use of each abbreviation not yet expanded in this output
// expanded.
func (x *Expander) Expand(text string) string {
	for _, t := range x.terms {
		if t.done {
			continue
		}
		loc := t.re.FindStringIndex(text)
		if loc == nil {
			continue
		}
		t.done = true
		text = text[:loc[0]] + t.stands + " (" + text[loc[0]:loc[1]] + ")" + text[loc[1]:]
	}
	return text
}
