"""Measurements run by hand, most with a real model (hours on 2 cores), and the scripts that
read their results folders; their figures are in docs/ with the command that made them."""
