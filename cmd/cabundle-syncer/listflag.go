package main

import "strings"

// commaList is a flag.Value that holds a list of names written with commas
// between them, each without the spaces around it. An empty value is an
// empty list; an empty name stays, for Validate to report.
type commaList struct{ names *[]string }

func (l commaList) String() string {
	if l.names == nil {
		return "" // the flag package's zero value, for --help
	}
	return strings.Join(*l.names, ",")
}

func (l commaList) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		*l.names = nil
		return nil
	}
	names := strings.Split(s, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	*l.names = names
	return nil
}
