package teach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/scenarios"
	"github.com/minikubelet/minikubelet/sim/replay"
)

// IndexPath is where the curriculum lives, relative to the scenario directory.
const IndexPath = "lessons/index.yaml"

// Lesson groups scenarios that teach one part of the kubelet.
type Lesson struct {
	Name        string   `json:"name"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Scenarios   []string `json:"scenarios"`
}

// Curriculum is the lessons index of a scenario library.
type Curriculum struct {
	Lessons []Lesson `json:"lessons"`
	// FS is the library: the built-in one or a directory.
	FS fs.FS `json:"-"`
	// Dir is the library's directory, "" for the built-in library. It names the library in
	// commands and messages.
	Dir string `json:"-"`
	// Other lists the library's scenarios that no lesson names.
	Other []string `json:"-"`
}

// ErrBadIndex is wrapped by the errors of LoadCurriculum about the index's content.
var ErrBadIndex = errors.New("bad lessons index")

// Builtin returns the curriculum of the library built into the binary (package scenarios).
func Builtin() (*Curriculum, error) {
	return LoadCurriculum(scenarios.FS, "")
}

// LoadCurriculum reads lessons/index.yaml of a scenario library, fsys (dir names it, "" for the
// built-in one), and checks that every lesson has a name, a title and a description, and names
// scenarios that exist in the library.
func LoadCurriculum(fsys fs.FS, dir string) (*Curriculum, error) {
	c := &Curriculum{FS: fsys, Dir: dir}
	path := c.where(IndexPath)
	data, err := fs.ReadFile(fsys, IndexPath)
	if err != nil {
		return nil, fmt.Errorf("load curriculum %s: %w", path, err)
	}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadIndex, path, err)
	}
	files, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("load curriculum %s: %w", path, err)
	}
	exists := map[string]bool{}
	for _, f := range files {
		exists[strings.TrimSuffix(f, ".yaml")] = true
	}
	used := map[string]bool{}
	names := map[string]bool{}
	var errs []error
	for i, l := range c.Lessons {
		if l.Name == "" || l.Title == "" || strings.TrimSpace(l.Description) == "" || len(l.Scenarios) == 0 {
			errs = append(errs, fmt.Errorf("%w: %s: lesson %d needs a name, a title, a description and scenarios", ErrBadIndex, path, i+1))
		}
		if names[l.Name] {
			errs = append(errs, fmt.Errorf("%w: %s: lesson %q twice", ErrBadIndex, path, l.Name))
		}
		names[l.Name] = true
		for _, s := range l.Scenarios {
			if !exists[s] {
				errs = append(errs, fmt.Errorf("%w: %s: lesson %q: no scenario %s", ErrBadIndex, path, l.Name, c.where(s+".yaml")))
			}
			used[s] = true
		}
	}
	for s := range exists {
		if !used[s] {
			c.Other = append(c.Other, s)
		}
	}
	sort.Strings(c.Other)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// where names a file of the library in messages: its path, or for the built-in library the
// path it has in the source tree, marked as built in.
func (c *Curriculum) where(name string) string {
	if c.Dir == "" {
		return "built-in scenarios/" + name
	}
	return filepath.Join(c.Dir, name)
}

// Lesson returns the lesson named name.
func (c *Curriculum) Lesson(name string) (*Lesson, bool) {
	for i := range c.Lessons {
		if c.Lessons[i].Name == name {
			return &c.Lessons[i], true
		}
	}
	return nil, false
}

// Arg is what names a scenario of the curriculum on the command line: its name for the built-in
// library, its file otherwise.
func (c *Curriculum) Arg(name string) string {
	if c.Dir == "" {
		return name
	}
	return filepath.Join(c.Dir, name+".yaml")
}

// Load reads and validates a scenario of the curriculum.
func (c *Curriculum) Load(name string) (*replay.Scenario, error) {
	data, err := fs.ReadFile(c.FS, name+".yaml")
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", replay.ErrInvalid, c.where(name+".yaml"), err)
	}
	return replay.Parse(c.where(name+".yaml"), data, replay.LoadOptions{})
}

// WriteList writes every lesson with its description and scenarios, each with the first line of
// its own description, and the scenarios in no lesson.
func (c *Curriculum) WriteList(w io.Writer) error {
	words, err := c.expander()
	if err != nil {
		return err
	}
	var b strings.Builder
	for i, l := range c.Lessons {
		fmt.Fprintf(&b, "Lesson %d: %s (%s)\n", i+1, l.Title, l.Name)
		for _, line := range strings.Split(wrap(words.Expand(strings.TrimSpace(l.Description))), "\n") {
			fmt.Fprintf(&b, "  %s\n", line)
		}
		for _, s := range l.Scenarios {
			fmt.Fprintf(&b, "  - %-38s %s\n", s, c.summary(s))
		}
		b.WriteString("\n")
	}
	if len(c.Other) > 0 {
		b.WriteString("Other scenarios\n")
		for _, s := range c.Other {
			fmt.Fprintf(&b, "  - %-38s %s\n", s, c.summary(s))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Walk through a scenario:  minikubelet explain %s\n", c.Arg("SCENARIO"))
	fmt.Fprintf(&b, "See it in a browser:      minikubelet replay --html SCENARIO.html %s\n", c.Arg("SCENARIO"))
	b.WriteString("The words of the kubelet:  minikubelet learn --glossary [TERM...]\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// WriteLesson writes one lesson with the whole description of each of its scenarios.
func (c *Curriculum) WriteLesson(w io.Writer, l *Lesson) error {
	words, err := c.expander()
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\n\n%s\n", l.Title, l.Name, wrap(words.Expand(strings.TrimSpace(l.Description))))
	for _, name := range l.Scenarios {
		fmt.Fprintf(&b, "\n%s\n", name)
		s, err := c.Load(name)
		if err != nil {
			return fmt.Errorf("lesson %s: %w", l.Name, err)
		}
		if d := strings.TrimSpace(s.Description); d != "" {
			for _, line := range strings.Split(wrap(words.Expand(d)), "\n") {
				fmt.Fprintln(&b, strings.TrimRight("  "+line, " "))
			}
		}
		fmt.Fprintf(&b, "  minikubelet explain %s\n", c.Arg(name))
		fmt.Fprintf(&b, "  minikubelet replay --html %s.html %s\n", name, c.Arg(name))
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// expander expands the glossary's abbreviations where the output first uses them.
func (c *Curriculum) expander() (*Expander, error) {
	g, err := BuiltinGlossary()
	if err != nil {
		return nil, err
	}
	return NewExpander(g), nil
}

// summary is the first sentence-line of a scenario's description.
func (c *Curriculum) summary(name string) string {
	s, err := c.Load(name)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(s.Description), "\n")
	return line
}

// Replay replays a scenario with every event kept, for Explain and WriteHTML.
func Replay(ctx context.Context, s *replay.Scenario) (*replay.Result, error) {
	return replay.Run(ctx, s, replay.RunOptions{KeepEvents: true, PodDiffs: true})
}

// LoadScenario reads and validates the scenario arg names: the file at that path when there is
// one, else the built-in scenario of that name (crash-loop, crash-loop.yaml, or
// scenarios/crash-loop.yaml as the documentation writes it). builtin says which.
func LoadScenario(arg string, opts replay.LoadOptions) (s *replay.Scenario, builtin bool, err error) {
	if name, ok := builtinName(arg); ok {
		if _, err := os.Stat(arg); errors.Is(err, fs.ErrNotExist) {
			if data, err := fs.ReadFile(scenarios.FS, name+".yaml"); err == nil {
				s, err := replay.Parse("built-in scenarios/"+name+".yaml", data, opts)
				return s, true, err
			}
		}
	}
	s, err = replay.Load(arg, opts)
	if errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("%w, and no built-in scenario is named %s (minikubelet learn lists them)", err, arg)
	}
	return s, false, err
}

// ReadGolden reads a golden file: the file at that path when there is one, else the built-in
// golden trace of that name (crash-loop.golden or scenarios/crash-loop.golden).
func ReadGolden(arg string) ([]byte, error) {
	data, err := os.ReadFile(arg)
	if !errors.Is(err, fs.ErrNotExist) || filepath.Ext(arg) != ".golden" {
		return data, err
	}
	if name, ok := builtinName(strings.TrimSuffix(arg, ".golden")); ok {
		if b, berr := fs.ReadFile(scenarios.FS, name+".golden"); berr == nil {
			return b, nil
		}
	}
	return nil, err
}

// builtinName is the name of the built-in scenario arg would name: a bare name, with or without
// .yaml, alone or under scenarios/.
func builtinName(arg string) (string, bool) {
	dir, base := path.Split(filepath.ToSlash(arg))
	if dir != "" && dir != "scenarios/" || base == "" {
		return "", false
	}
	return strings.TrimSuffix(base, ".yaml"), true
}

// WriteReports writes the HTML timeline of every scenario of the curriculum into dir, as
// SCENARIO.html, and returns the files written.
func (c *Curriculum) WriteReports(ctx context.Context, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("write reports: %w", err)
	}
	seen := map[string]bool{}
	var files []string
	for _, l := range c.Lessons {
		for _, name := range l.Scenarios {
			if seen[name] {
				continue
			}
			seen[name] = true
			s, err := c.Load(name)
			if err != nil {
				return files, fmt.Errorf("lesson %s: %w", l.Name, err)
			}
			res, err := Replay(ctx, s)
			if err != nil {
				return files, fmt.Errorf("lesson %s: %w", l.Name, err)
			}
			path := filepath.Join(dir, name+".html")
			f, err := os.Create(path)
			if err != nil {
				return files, fmt.Errorf("write reports: %w", err)
			}
			err = WriteHTML(f, NewTimeline(s, res))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return files, fmt.Errorf("write report %s: %w", path, err)
			}
			files = append(files, path)
		}
	}
	return files, nil
}
