package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestRunUIInBrowser runs a node with --ui, opens the live view in headless chromium, writes a
// manifest into the static pod directory and watches it propagate: the pod's lanes appear, and a
// click on the pod worker shows the chain back to the file source's SET.
func TestRunUIInBrowser(t *testing.T) {
	var browserPath string
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			browserPath = p
			break
		}
	}
	if browserPath == "" {
		t.Skip("no chromium on PATH (apt-get install -y chromium)")
	}
	dir := t.TempDir()
	cfg := testConfig(dir, true)
	cfg.UIAddr = "127.0.0.1:0"
	urls := make(chan string, 1)
	cfg.UIStarted = func(url string) { urls <- url }
	runInBackground(t, cfg, newTraceLog())
	var url string
	select {
	case url = <-urls:
	case <-time.After(waitTimeout):
		t.Fatal("the timeline view did not start")
	}

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browserPath), chromedp.NoSandbox, chromedp.WindowSize(1600, 900), chromedp.Flag("disable-gpu", true))...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", browserPath, err)
	}
	ctx, cancelTimeout := context.WithTimeout(bctx, waitTimeout)
	defer cancelTimeout()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!(window.mkView && window.mkView.ready && window.mkView.events() > 0)")); err != nil {
		t.Fatalf("the page got no events: %v", err)
	}
	writeManifest(t, dir, "web.yaml", podYAML("web", "", "nginx:1.27"))
	pod := "default/web-" + testNode
	seq, err := chromedp.Run(ctx, chromedp.Poll[int](fmt.Sprintf("window.mkView.find('podworkers', 'sync', %q)", pod)))
	if err != nil {
		t.Fatalf("no pod worker sync of %s reached the page: %v", pod, err)
	}
	lanes, err := chromedp.Run(ctx, chromedp.Evaluate[[]string]("window.mkView.lanes()"))
	if err != nil {
		t.Fatal(err)
	}
	if !contains(lanes, pod) || !contains(lanes, "podworkers") {
		t.Errorf("lanes %q: want podworkers and %s", lanes, pod)
	}
	type point struct{ X, Y float64 }
	// The lanes redraw on the next animation frame; wait for the event to be drawn.
	p, err := chromedp.Run(ctx, chromedp.Poll[*point](fmt.Sprintf("window.mkView.point(%d)", seq)))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(p.X, p.Y), chromedp.WaitVisible(chromedp.CSS("#chain"))); err != nil {
		t.Fatal(err)
	}
	chain, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#chain .chain-item')).map(li => li.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	// The click lands on the worker's first event at that instant (its state change or its sync).
	if len(chain) == 0 {
		t.Fatal("no cause chain")
	}
	if last := chain[len(chain)-1]; len(chain) < 4 || !strings.Contains(chain[0], "sources set") ||
		!strings.Contains(last, "podworkers") || !strings.Contains(last, pod) {
		t.Errorf("cause chain %q: want it to run from the file source's SET to the pod worker of %s", chain, pod)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "run-ui.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", shot)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
