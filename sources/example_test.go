package sources_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/sources"
)

func ExampleFile_Relist() {
	dir, err := os.MkdirTemp("", "manifests")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	web := "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: web, image: nginx}]\n"
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(web), 0o644); err != nil {
		panic(err)
	}
	src, err := sources.NewFile(sources.FileOptions{Path: dir, NodeName: "node-1", Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard})
	if err != nil {
		panic(err)
	}
	update, err := src.Relist()
	fmt.Println(update.Op, update.Source, len(update.Pods), update.Pods[0].Name, err)
	next, _ := src.NextWake()
	fmt.Println(next.Sub(vclock.Epoch))
	// Output:
	// SET file 1 web-node-1 <nil>
	// 20s
}
