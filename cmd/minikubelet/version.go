package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// kubeletVersion is the kubelet minikubelet simulates.
const kubeletVersion = "v1.35"

// version is minikubelet's version: the module version the binary was built from (`go install
// ...@v0.3.0` records it), or "devel" for a build from a working tree.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" || info.Main.Version == "(devel)" {
		return "devel"
	}
	return info.Main.Version
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print minikubelet's version",
		Long: `version prints minikubelet's version (the module version it was built from, or "devel"),
the kubelet version it simulates and the Go version it was built with. "minikubelet --version"
prints the first line alone.`,
		Example: `  minikubelet version
  minikubelet --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "minikubelet %s\nsimulates the kubelet %s\nbuilt with %s\n", version(), kubeletVersion, runtime.Version())
			return nil
		},
	}
}
