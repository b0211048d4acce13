"""The pipeline in the driver's own process, for inputs one machine holds."""
