"""MXNet 1.x's module API (``mx.mod``): Module trains and runs a symbol over DataIter batches
(fit, score, predict, and the intermediate bind / init_params / init_optimizer / forward /
backward / update steps); BucketingModule shares one set of parameters among symbols of
several bucket keys. MXNet 2.0 dropped the package; 1.x scripts still use it."""
from .base_module import BaseModule, BatchEndParam
from .bucketing_module import BucketingModule
from .executor_group import DataParallelExecutorGroup
from .module import Module

__all__ = ["BaseModule", "BatchEndParam", "BucketingModule", "DataParallelExecutorGroup",
           "Module"]
