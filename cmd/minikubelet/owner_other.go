//go:build !unix

package main

import "io/fs"

// ownedByOther reports false: without Unix owners, the rename alone protects the kubeconfig.
func ownedByOther(fs.FileInfo) (uid int, other bool) { return 0, false }
