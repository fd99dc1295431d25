"""The pure core of workmem: values in, values out. No I/O, no clock, no environment, no randomness."""
