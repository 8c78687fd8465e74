package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// asMain makes the test binary run as minikubelet itself, main and os.Args included, so that
// tests can send it signals without building it.
const asMain = "MINIKUBELET_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	switch os.Getenv(asMain) {
	case "main":
		main()
		os.Exit(0)
	case "signals":
		signalsChild()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// signalsChild is the child process of TestSecondSignalExitsAtOnce: it says when its signal
// context is set up and when the context is cancelled, and then ignores the cancellation, as a
// command stuck in its shutdown would.
func signalsChild() {
	ctx, stop := signalContext(context.Background())
	defer stop()
	fmt.Println("ready")
	<-ctx.Done()
	fmt.Println("stopping")
	io.Copy(io.Discard, os.Stdin) // the parent never closes it
}
