// Package tools finds the repository the tests run in and the programs
// that make builds into its bin/ for them: the control plane, the
// neighbours, the images and the rule, dashboard and release tools. Each
// has one environment variable, which the Makefile exports, and one rule
// for when it is missing (Tool.Path).
package tools
