// Package tools finds the repository the tests run in and the programs that
// make builds into its bin/ for them, each by one environment variable that
// the Makefile exports, with one rule for when it is missing (Tool.Path).
package tools
