package teach

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/minikubelet/minikubelet/sim/replay"
)

// screenshots is where the browser test saves its screenshots; the test's temporary directory
// when empty. `go test ./teach -run TestBrowser -screenshots ../docs/img` refreshes the README's.
var screenshots = flag.String("screenshots", "", "directory for the browser test's screenshots")

// chromium returns the system browser, skipping the test without one.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (apt-get install -y chromium)")
	return ""
}

// browser starts a headless chromium for one test, with a window of 1600x1000, whose actions
// may take up to timeout together. Start it after the replays the test needs: a replay's time is
// not the browser's.
func browser(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	return browserSized(t, 1600, 1000, timeout)
}

// browserSized starts a headless chromium for one test, with a window of w x h pixels.
func browserSized(t *testing.T, w, h int, timeout time.Duration) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.WindowSize(w, h),
		chromedp.Flag("disable-gpu", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	// The first Run starts the browser, with no timeout on it; the test's actions get one.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start %s: %v", chromium(t), err)
	}
	tctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return tctx
}

func shotDir(t *testing.T) string {
	if *screenshots != "" {
		return *screenshots
	}
	return t.TempDir()
}

// replayHTML replays a scenario file and writes its report, returning its path.
func replayHTML(t *testing.T, file string) (string, *Timeline) {
	t.Helper()
	s, err := replay.Load(file, replay.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), s, replay.RunOptions{KeepEvents: true, PodDiffs: true})
	if err != nil {
		t.Fatal(err)
	}
	tl := NewTimeline(s, res)
	path := filepath.Join(t.TempDir(), s.Name+".html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, tl); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, tl
}

// findEvent returns the seq of the first event of the timeline that matches.
func findEvent(t *testing.T, tl *Timeline, component, kind string, at float64) uint64 {
	t.Helper()
	for _, e := range tl.Events {
		if tl.Strings[e[3].(int)] == component && tl.Strings[e[4].(int)] == kind && e[2].(float64) == at {
			return e[0].(uint64)
		}
	}
	t.Fatalf("no %s %s event at %vs", component, kind, at)
	return 0
}

// clickEvent clicks where the page draws the event seq.
func clickEvent(ctx context.Context, seq uint64) error {
	type point struct{ X, Y float64 }
	p, err := chromedp.Run(ctx, chromedp.Evaluate[*point](fmt.Sprintf("window.mkView.point(%d)", seq)))
	if err != nil {
		return err
	}
	if p == nil {
		return fmt.Errorf("event %d is not drawn", seq)
	}
	return chromedp.Do(ctx, chromedp.MouseClickXY(p.X, p.Y))
}

// eval evaluates a JavaScript expression in the page and decodes its value.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	for {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
		if err == nil {
			return v
		}
		// See open: the one error of an execution context not yet replaced is asked again.
		if !strings.Contains(err.Error(), "Cannot find context with specified id") || ctx.Err() != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
	}
}

// open loads a page and waits for the view to be ready.
func open(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	// Right after a navigation Chromium may still hold the old page's execution context, and an
	// evaluation in it fails with "Cannot find context with specified id" although the new page
	// is fine: that one error is asked again, until the test's deadline.
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf("location.href === %q && !!(window.mkView && window.mkView.ready)", url)))
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "Cannot find context with specified id") || ctx.Err() != nil {
			t.Fatal(err)
		}
	}
}

// clickAndRead clicks the event seq and returns the title of the details and the cause chain.
func clickAndRead(t *testing.T, ctx context.Context, seq uint64) (string, []string) {
	t.Helper()
	if err := clickEvent(ctx, seq); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#chain"))); err != nil {
		t.Fatal(err)
	}
	title := eval[string](t, ctx, `document.getElementById('sel-title').textContent`)
	chain := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#chain .chain-item')).map(li => li.textContent)`)
	return title, chain
}

// screenshot saves the page as name.png in the screenshot directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(shotDir(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// inChromiumUnderRace is why the browser tests that open replays' pages from files skip under
// -race: the replays run on the test's goroutine before the browser starts, the page runs in
// chromium's process, and the test drives it from its own goroutine, so the only other goroutines
// are chromedp's, which are not this module's code; the plain suite runs them.
const inChromiumUnderRace = "replays on one goroutine and a page in chromium's process, nothing of this module for the race detector"

func TestBrowserReport(t *testing.T) {
	if raceEnabled {
		t.Skip(inChromiumUnderRace)
	}
	chromium(t)
	type report struct {
		path string
		tl   *Timeline
	}
	reports := map[string]report{}
	files := []string{"../../scenarios/crash-loop.yaml", "../../scenarios/static-pod-lifecycle.yaml", "../../scenarios/device-plugin-register.yaml"}
	for _, f := range files {
		path, tl := replayHTML(t, f)
		reports[f] = report{path, tl}
	}
	// The three pages open and are clicked in about 3s on a quiet machine.
	ctx := browser(t, 30*time.Second)
	for _, tc := range []struct {
		file string
		// the event to click: component, event, time; and what its chain must start with
		component, kind string
		at              float64
		root            string
		lanes           []string
		// show is the time range of the screenshot, in seconds; none for the whole run.
		show []float64
	}{
		{file: "../../scenarios/crash-loop.yaml", component: "podworkers", kind: "sync", at: 24, root: "scenario crashLoop",
			lanes: []string{"sources", "podconfig", "syncloop", "podworkers", "runtime", "pleg", "status", "apiserver", "default/crasher", "app"},
			show:  []float64{-2, 110}},
		{file: "../../scenarios/static-pod-lifecycle.yaml", component: "runtime", kind: "killing", at: 20, root: "scenario removeManifest",
			lanes: []string{"sources", "podworkers", "mirror", "default/web-node-1", "nginx"}, show: []float64{-0.5, 24}},
		{file: "../../scenarios/device-plugin-register.yaml", component: "devicemanager", kind: "allocate", at: 12, root: "scenario apiCreatePod",
			lanes: []string{"pluginwatcher", "pluginmanager", "devicemanager", "default/train"}},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			path, tl := reports[tc.file].path, reports[tc.file].tl
			seq := findEvent(t, tl, tc.component, tc.kind, tc.at)
			open(t, ctx, "file://"+path)
			if tc.show != nil {
				eval[any](t, ctx, fmt.Sprintf("window.mkView.show(%g, %g)", tc.show[0], tc.show[1]))
			}
			lanes := eval[[]string](t, ctx, "window.mkView.lanes()")
			loadMs := eval[float64](t, ctx, "window.mkView.loadMs")
			for _, want := range tc.lanes {
				if !contains(lanes, want) {
					t.Errorf("lanes %q: no %q", lanes, want)
				}
			}
			title, chain := clickAndRead(t, ctx, seq)
			if want := fmt.Sprintf("#%d %s %s", seq, tc.component, tc.kind); title != want {
				t.Errorf("selected %q, want %q", title, want)
			}
			if len(chain) < 3 || !strings.Contains(chain[0], tc.root) || !strings.HasPrefix(chain[len(chain)-1], fmt.Sprintf("#%d ", seq)) {
				t.Errorf("cause chain %q: want it to run from %q to #%d", chain, tc.root, seq)
			}
			if errs := eval[[]string](t, ctx, "window.mkView.errors"); len(errs) > 0 {
				t.Errorf("the page threw: %q", errs)
			}
			t.Logf("%s: %d lanes, loaded in %.0fms", tc.file, len(lanes), loadMs)
			screenshot(t, ctx, "timeline-"+strings.TrimSuffix(filepath.Base(tc.file), ".yaml"))
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// bigScenario is an hour of 100 API pods, half of them crash-looping every 30s.
func bigScenario() string {
	var b strings.Builder
	b.WriteString("name: hundred-pods-an-hour\ndescription: 100 API pods for an hour, half of them crash-looping.\nsources: [api]\nsteps:\n")
	for i := range 100 {
		if i%2 == 0 {
			fmt.Fprintf(&b, "- at: 1s\n  crashLoop: {pod: default/p%d, container: app, exitCode: 1, after: 30s}\n", i)
		}
		fmt.Fprintf(&b, "- at: 1s\n  apiCreatePod:\n    pod:\n      metadata: {name: p%d, namespace: default}\n"+
			"      spec:\n        nodeName: node-1\n        containers:\n        - {name: app, image: busybox:1.36}\n", i)
	}
	b.WriteString("- at: 1h\n  expect: {pod: default/p1, phase: Running}\n")
	return b.String()
}

// TestBrowserLargeReport opens the report of an hour of 100 pods and checks that it holds every
// event and draws them, that a zoom redraws, and that the search keeps the lanes it should:
// repetitive events are thinned when drawn. The replay runs before the browser starts, so that
// the browser's deadline covers the browser's work alone.
func TestBrowserLargeReport(t *testing.T) {
	if testing.Short() || raceEnabled {
		// The race detector slows the replay tenfold and tells nothing about the page.
		t.Skip("an hour of 100 pods takes seconds to replay")
	}
	chromium(t)
	s, err := replay.Parse("hundred-pods-an-hour.yaml", []byte(bigScenario()), replay.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), s, replay.RunOptions{KeepEvents: true, PodDiffs: true})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, NewTimeline(s, res)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// The page opens, draws and is searched in about 3s on a quiet machine.
	ctx := browser(t, 30*time.Second)
	start := time.Now()
	open(t, ctx, "file://"+path)
	elapsed := time.Since(start)
	events := eval[int](t, ctx, "window.mkView.events()")
	loadMs := eval[float64](t, ctx, "window.mkView.loadMs")
	if events != len(res.Events) {
		t.Errorf("the page holds %d events, want all %d", events, len(res.Events))
	}
	lanes := eval[[]string](t, ctx, "window.mkView.lanes()")
	if !contains(lanes, "default/p99") {
		t.Errorf("no lane for default/p99 among %d lanes", len(lanes))
	}
	// A zoom into the middle and back out, each drawn at once. How long they take is measured
	// and logged, not asserted: a loaded machine says nothing about the page.
	redrawMs := eval[float64](t, ctx, `(() => { document.getElementById('zin').click(); window.mkView.draw(); const a = window.mkView.stats.ms;
		document.getElementById('fit').click(); window.mkView.draw(); return Math.max(a, window.mkView.stats.ms); })()`)
	drawn := eval[int](t, ctx, "window.mkView.stats.drawn")
	t.Logf("%d events, %d lanes: parsed and drawn in %.0fms (page open %v), redraw %.0fms, %d ticks drawn",
		events, len(lanes), loadMs, elapsed.Round(time.Millisecond), redrawMs, drawn)
	// Thinning: at most one tick per pixel column of each lane, far fewer than the events.
	if drawn == 0 || drawn >= events {
		t.Errorf("%d ticks drawn for %d events, want some, thinned to fewer than the events", drawn, events)
	}
	// The search keeps the component lanes and the pods that match.
	visible := eval[[]string](t, ctx, `(() => { const s = document.getElementById('search'); s.value = 'default/p99';
		s.dispatchEvent(new Event('input')); return window.mkView.visible(); })()`)
	if !contains(visible, "default/p99") || !contains(visible, "runtime") || contains(visible, "default/p98") {
		t.Errorf("after a search for default/p99 the lanes are %q", visible)
	}
	if errs := eval[[]string](t, ctx, "window.mkView.errors"); len(errs) > 0 {
		t.Errorf("the page threw: %q", errs)
	}
	screenshot(t, ctx, "timeline-hundred-pods-an-hour")
}

// label is the box of a text the page drew on its canvas.
type label struct {
	Text, Kind string
	X, Y, W, H float64
}

func (a label) overlaps(b label) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

// TestBrowserLessonLayout opens the timeline of every scenario of five lessons (restarts,
// sidecars, the start-up, the pod machinery, device plugins) in a window of 1400x900, fitted and
// zoomed in, and takes a screenshot of each: no text the page draws covers
// another, the legend stays on one line above the time axis, every step is numbered, containers
// come in the order they ran, and a lane's name leads to the glossary.
func TestBrowserLessonLayout(t *testing.T) {
	if raceEnabled {
		t.Skip(inChromiumUnderRace)
	}
	chromium(t)
	c, err := LoadCurriculum(os.DirFS("../../scenarios"), "../../scenarios")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, lesson := range []string{"restarts-and-backoff", "sidecars-and-hooks", "start-up", "pod-machinery", "device-plugins"} {
		l, ok := c.Lesson(lesson)
		if !ok {
			t.Fatalf("no lesson %s", lesson)
		}
		for _, name := range l.Scenarios {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	pages := map[string]string{}
	steps := map[string]int{}
	for _, name := range names {
		path, tl := replayHTML(t, c.Arg(name))
		pages[name], steps[name] = path, len(tl.Steps)
	}
	// Each page opens and is checked in well under a second on a quiet machine.
	ctx := browserSized(t, 1400, 900, time.Duration(len(names))*10*time.Second)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			open(t, ctx, "file://"+pages[name])
			legend := eval[[]float64](t, ctx, `Array.from(document.querySelectorAll('#legend > span')).map(s => s.getBoundingClientRect().top)`)
			for _, top := range legend {
				if top != legend[0] {
					t.Errorf("the legend's items start at %v, want one line", legend)
					break
				}
			}
			if bottom, axis := eval[float64](t, ctx, `document.getElementById('legend').getBoundingClientRect().bottom`),
				eval[float64](t, ctx, `document.getElementById('canvas').getBoundingClientRect().top`); bottom > axis {
				t.Errorf("the legend ends at %vpx, below the top of the lanes at %vpx", bottom, axis)
			}
			for _, view := range []string{"fit", "zin"} {
				eval[any](t, ctx, "document.getElementById('"+view+"').click(), window.mkView.draw()")
				labels := eval[[]label](t, ctx, "window.mkView.labels")
				if len(labels) == 0 {
					t.Fatalf("%s: the page drew no text", view)
				}
				for i, a := range labels {
					for _, b := range labels[i+1:] {
						if a.overlaps(b) {
							t.Errorf("%s: %s %q at (%.0f,%.0f) and %s %q at (%.0f,%.0f) overlap", view, a.Kind, a.Text, a.X, a.Y, b.Kind, b.Text, b.X, b.Y)
						}
					}
				}
				if view == "fit" {
					numbered := 0
					for _, g := range eval[[]struct{ Steps []int }](t, ctx, "window.mkView.stepGroups()") {
						numbered += len(g.Steps)
					}
					if numbered != steps[name] {
						t.Errorf("%d of %d steps are numbered above the time axis", numbered, steps[name])
					}
				}
				screenshot(t, ctx, "layout-"+name+"-"+view)
			}
			if errs := eval[[]string](t, ctx, "window.mkView.errors"); len(errs) > 0 {
				t.Errorf("the page threw: %q", errs)
			}
		})
	}

	t.Run("container order", func(t *testing.T) {
		open(t, ctx, "file://"+pages["sidecar-start-order"])
		var got []string
		for _, l := range eval[[]string](t, ctx, "window.mkView.lanes()") {
			if l == "proxy" || l == "setup" || l == "app" {
				got = append(got, l)
			}
		}
		if want := []string{"proxy", "setup", "app"}; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("container lanes %q, want the sidecar, the init container, then the app: %q", got, want)
		}
	})

	t.Run("glossary", func(t *testing.T) {
		open(t, ctx, "file://"+pages["crash-loop"])
		type point struct{ X, Y float64 }
		p := eval[*point](t, ctx, "window.mkView.laneLabel('pleg')")
		if p == nil {
			t.Fatal("the pleg lane's name is not drawn")
		}
		if err := chromedp.Do(ctx, chromedp.MouseClickXY(p.X, p.Y)); err != nil {
			t.Fatal(err)
		}
		if title := eval[string](t, ctx, `(document.getElementById('term-title') || {}).textContent || ''`); title != "PLEG" {
			t.Errorf("a click on the pleg lane shows %q, want the glossary's PLEG", title)
		}
		if d := eval[string](t, ctx, `document.getElementById('desc').textContent`); !strings.Contains(d, "Pod Lifecycle Event Generator (PLEG)") {
			t.Errorf("the description %q does not expand PLEG where it first uses it", d)
		}
	})
}
