module github.com/edgebloom/edgebloom/modtest

// Builds each published module of the repository the way a consumer does:
// GOWORK=off, against a module proxy made from this checkout. Standard
// library only; not published.

go 1.24.0
