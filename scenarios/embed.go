package scenarios

import "embed"

// FS holds every scenario NAME.yaml with its golden trace NAME.golden and its narration
// NAME.explain, and lessons/index.yaml, at the paths they have in this directory.
//
//go:embed *.yaml *.golden *.explain lessons/index.yaml
var FS embed.FS
