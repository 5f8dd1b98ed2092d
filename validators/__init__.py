"""Torch validators: the paper's model, trainers and the measurements that could falsify each
bound."""
