package main

import "github.com/spf13/pflag"

// bindDataDir adds --data-dir, where the fake API server keeps its objects across restarts.
func bindDataDir(fs *pflag.FlagSet, dir *string) {
	fs.StringVar(dir, "data-dir", "", "keep the fake API server's objects in a database in this directory, so that they survive a restart; empty keeps them in memory")
}
