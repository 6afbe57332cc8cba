// placeholder: filled by the collectives/topology work (issue 4)
