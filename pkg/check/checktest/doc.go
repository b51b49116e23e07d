// Package checktest builds the objects of a healthy kim-snatch install, so
// that the tests of package check and of `cabundle-syncer check` can start
// from a cluster where every check passes and break one item at a time. The
// same objects go into a fake clientset or, with Create, into a real API
// server.
//
// It is imported by tests only.
package checktest
