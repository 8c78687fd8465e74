package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/minikubelet/minikubelet/sim/replay"
	"github.com/minikubelet/minikubelet/sim/teach"
)

func newExplainCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "explain SCENARIO",
		Short: "Replay a scenario and narrate it step by step in plain English",
		Long: `explain replays a scenario on the virtual clock, like replay, and tells what happened: one
paragraph per step, saying what the step changed and then, instant by instant, what each
component did because of it. It follows each event's cause (docs/trace.md, "Causes") forward
from the step, names the kubelet function that did it, and gives the timing, such as how long a
crash-loop back-off held a restart. Instants that repeat an earlier one are folded into it.

SCENARIO is a scenario file, or the name of a scenario built into the binary (minikubelet learn
lists them), so that explain works from any directory.

The narration is deterministic, like the trace. Exit codes: 0 when every expectation is met, 1 when
one fails, 2 for an invalid scenario.`,
		Example: `  minikubelet explain static-pod-lifecycle
  minikubelet explain scenarios/static-pod-lifecycle.yaml
  minikubelet learn    # the lessons, and the scenarios of each`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, _, err := teach.LoadScenario(args[0], replay.LoadOptions{})
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			res, err := teach.Replay(cmd.Context(), s)
			if err != nil {
				return err
			}
			if err := teach.Explain(cmd.OutOrStdout(), s, res); err != nil {
				return err
			}
			if !res.Passed() {
				return &exitError{code: 1, err: fmt.Errorf("%s: the replay failed", args[0])}
			}
			return nil
		},
	}
}

func newLearnCommand() *cobra.Command {
	var dir, html string
	var glossary bool
	cmd := &cobra.Command{
		Use:   "learn [LESSON]",
		Short: "List the lessons: the scenarios grouped by what they teach about the kubelet",
		Long: `learn lists the curriculum: each lesson with a description for a learner and its
scenarios. With a LESSON name, it shows that lesson with the whole description of each scenario and
the commands that walk through it: explain narrates a scenario in the terminal, replay --html draws
it in a browser.

The lessons and their scenarios are built into the binary (the repository's scenarios/ directory
at the version it was built from), so learn, explain NAME and replay NAME work from any directory.
--scenarios DIR reads another library instead: DIR/lessons/index.yaml and DIR's scenario files.

--html DIR writes the HTML timeline of every lesson's scenario into DIR.

--glossary prints the glossary: the kubelet's words as the lessons use them (PLEG, pod worker
states, SyncPod's actions, mirror pod, admission, QoS...), each with what it means in the v1.35
kubelet and where it lives in its source; with TERM arguments, only those terms. The timeline
page links to the same entries.`,
		Example: `  minikubelet learn
  minikubelet learn restarts-and-backoff
  minikubelet learn --glossary PLEG "mirror pod"
  minikubelet learn --html lessons/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if glossary {
				return nil
			}
			return cobra.MaximumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if glossary {
				g, err := teach.BuiltinGlossary()
				if err != nil {
					return err
				}
				if err := g.Write(cmd.OutOrStdout(), args...); err != nil {
					return &exitError{code: 2, err: fmt.Errorf("learn --glossary: %w", err)}
				}
				return nil
			}
			c, err := curriculum(dir)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			return learn(cmd, c, args, html)
		},
	}
	cmd.Flags().StringVar(&dir, "scenarios", "", "read the lessons and scenarios of this directory (its lessons/index.yaml) instead of the built-in ones")
	cmd.Flags().StringVar(&html, "html", "", "write every lesson scenario's HTML timeline into this directory")
	cmd.Flags().BoolVar(&glossary, "glossary", false, "print the glossary of the kubelet's words, or the terms given as arguments")
	return cmd
}

func learn(cmd *cobra.Command, c *teach.Curriculum, args []string, html string) error {
	out := cmd.OutOrStdout()
	if html != "" {
		files, err := c.WriteReports(cmd.Context(), html)
		if err != nil {
			return err
		}
		for _, f := range files {
			fmt.Fprintln(out, f)
		}
		return nil
	}
	if len(args) == 0 {
		return c.WriteList(out)
	}
	l, ok := c.Lesson(args[0])
	if !ok {
		var names []string
		for _, l := range c.Lessons {
			names = append(names, l.Name)
		}
		where := "the built-in lessons"
		if c.Dir != "" {
			where = filepath.Join(c.Dir, teach.IndexPath)
		}
		return &exitError{code: 2, err: fmt.Errorf("no lesson %q in %s: want one of %v", args[0], where, names)}
	}
	return c.WriteLesson(out, l)
}

// curriculum is the built-in curriculum, or dir's.
func curriculum(dir string) (*teach.Curriculum, error) {
	if dir == "" {
		return teach.Builtin()
	}
	return teach.LoadCurriculum(os.DirFS(dir), dir)
}
