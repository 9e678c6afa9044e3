module nested

go 1.26
