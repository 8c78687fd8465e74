package scenarios

import "embed"

// FS holds every scenario NAME.yaml with its golden trace NAME.golden and its narration
// NAME.explain, and the lessons index and glossary (lessons/*.yaml), at the paths they have in
// this directory.
//
//go:embed *.yaml *.golden *.explain lessons/*.yaml
var FS embed.FS
