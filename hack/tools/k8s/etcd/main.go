// Command etcd is etcd's own server main, built from the module proxy so that
// tests need no downloaded binaries.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
