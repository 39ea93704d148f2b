module github.com/edgebloom/edgebloom/urlkey

go 1.24.0

require golang.org/x/net v0.50.0

require golang.org/x/text v0.34.0 // indirect
