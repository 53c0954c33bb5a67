"""Latent trees: tensor-train and tree embeddings of a joint distribution, tree
topologies and models, and the low-rank tree embedding estimator.

Derived in :doc:`/chapters/08_latent_trees`. The modules of this package are private; these
names are its public surface.
"""
from ._estimator import LatentTreeEmbedding
from ._latent_tree import (
                           LatentTree,
                           LatentTreeModel,
                           TreeTensorNetwork,
                           binary_tree,
                           chain_ranks,
                           edge_errors,
                           edge_ranks,
                           random_latent_tree_model,
                           random_tree,
                           sample_hidden_chain,
                           symmetric_tree_model,
                           tree_decomposition,
)
from ._tensor_train import reshaping_errors, tt_embedding

__all__ = [
    "binary_tree",
    "chain_ranks",
    "edge_errors",
    "edge_ranks",
    "LatentTree",
    "LatentTreeEmbedding",
    "LatentTreeModel",
    "random_latent_tree_model",
    "random_tree",
    "reshaping_errors",
    "sample_hidden_chain",
    "symmetric_tree_model",
    "tree_decomposition",
    "TreeTensorNetwork",
    "tt_embedding",
]
