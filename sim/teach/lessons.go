package teach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

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

// Curriculum is the lessons index of a scenario directory.
type Curriculum struct {
	Lessons []Lesson `json:"lessons"`
	// Dir is the scenario directory; Other lists its scenarios that no lesson names.
	Dir   string   `json:"-"`
	Other []string `json:"-"`
}

// ErrBadIndex is wrapped by the errors of LoadCurriculum about the index's content.
var ErrBadIndex = errors.New("bad lessons index")

// LoadCurriculum reads dir/lessons/index.yaml and checks that every lesson has a name, a title and
// a description, and names scenarios that exist in dir.
func LoadCurriculum(dir string) (*Curriculum, error) {
	path := filepath.Join(dir, IndexPath)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load curriculum: %w", err)
	}
	c := &Curriculum{Dir: dir}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadIndex, path, err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("load curriculum: %w", err)
	}
	exists := map[string]bool{}
	for _, f := range files {
		exists[strings.TrimSuffix(filepath.Base(f), ".yaml")] = true
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
				errs = append(errs, fmt.Errorf("%w: %s: lesson %q: no scenario %s", ErrBadIndex, path, l.Name, filepath.Join(dir, s+".yaml")))
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

// Lesson returns the lesson named name.
func (c *Curriculum) Lesson(name string) (*Lesson, bool) {
	for i := range c.Lessons {
		if c.Lessons[i].Name == name {
			return &c.Lessons[i], true
		}
	}
	return nil, false
}

// ScenarioPath is the file of a scenario of the curriculum.
func (c *Curriculum) ScenarioPath(name string) string {
	return filepath.Join(c.Dir, name+".yaml")
}

// WriteList writes every lesson with its description and scenarios, each with the first line of
// its own description, and the scenarios in no lesson.
func (c *Curriculum) WriteList(w io.Writer) error {
	var b strings.Builder
	for i, l := range c.Lessons {
		fmt.Fprintf(&b, "Lesson %d: %s (%s)\n", i+1, l.Title, l.Name)
		for _, line := range strings.Split(wrap(strings.TrimSpace(l.Description)), "\n") {
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
	fmt.Fprintf(&b, "Walk through a scenario:  minikubelet explain %s\n", c.ScenarioPath("SCENARIO"))
	fmt.Fprintf(&b, "See it in a browser:      minikubelet replay --html SCENARIO.html %s\n", c.ScenarioPath("SCENARIO"))
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteLesson writes one lesson with the whole description of each of its scenarios.
func (c *Curriculum) WriteLesson(w io.Writer, l *Lesson) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\n\n%s\n", l.Title, l.Name, wrap(strings.TrimSpace(l.Description)))
	for _, name := range l.Scenarios {
		fmt.Fprintf(&b, "\n%s\n", name)
		s, err := replay.Load(c.ScenarioPath(name), replay.LoadOptions{})
		if err != nil {
			return fmt.Errorf("lesson %s: %w", l.Name, err)
		}
		if d := strings.TrimSpace(s.Description); d != "" {
			for _, line := range strings.Split(wrap(d), "\n") {
				fmt.Fprintln(&b, strings.TrimRight("  "+line, " "))
			}
		}
		fmt.Fprintf(&b, "  minikubelet explain %s\n", c.ScenarioPath(name))
		fmt.Fprintf(&b, "  minikubelet replay --html %s.html %s\n", name, c.ScenarioPath(name))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// summary is the first sentence-line of a scenario's description.
func (c *Curriculum) summary(name string) string {
	s, err := replay.Load(c.ScenarioPath(name), replay.LoadOptions{})
	if err != nil {
		return "(" + err.Error() + ")"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(s.Description), "\n")
	return line
}

// Replay loads and replays one scenario file with every event kept, for Explain and WriteHTML.
func Replay(ctx context.Context, path string) (*replay.Scenario, *replay.Result, error) {
	s, err := replay.Load(path, replay.LoadOptions{})
	if err != nil {
		return nil, nil, err
	}
	res, err := replay.Run(ctx, s, replay.RunOptions{KeepEvents: true, PodDiffs: true})
	if err != nil {
		return nil, nil, err
	}
	return s, res, nil
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
			s, res, err := Replay(ctx, c.ScenarioPath(name))
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
